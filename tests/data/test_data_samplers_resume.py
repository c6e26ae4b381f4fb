"""Exact resume: a sampler restored from a state continues with the next unseen sample."""

from itertools import islice

import pytest

from runnerx.data import DefaultSampler, InfiniteSampler


def interleave(per_rank):
    return [index for group in zip(*per_rank) for index in group]


@pytest.mark.parametrize("rank", [0, 1])
@pytest.mark.parametrize("round_up", [True, False])
def test_default_sampler_resumes_from_its_state_at_every_position(rank, round_up):
    def make(seed):
        return DefaultSampler(range(9), seed=seed, round_up=round_up, rank=rank, world_size=2)

    reference = make(5)
    reference.set_epoch(3)
    uninterrupted = list(reference)
    for k in range(len(uninterrupted) + 1):
        original = make(5)
        original.set_epoch(3)
        head = list(islice(original, k))
        state = original.state_dict()
        assert state == dict(epoch=3, seed=5, consumed=k, world_size=2)
        restored = make(None)  # another seed: the state's seed wins
        restored.load_state_dict(state)
        restored.set_epoch(3)  # what a loop does at the start of the resumed epoch
        assert head + list(restored) == uninterrupted


def test_default_sampler_set_consumed_skips_that_many_samples_once():
    sampler = DefaultSampler(range(10), seed=1)
    full = list(sampler)
    sampler.set_consumed(4)
    assert sampler.state_dict()["consumed"] == 4
    assert list(sampler) == full[4:]
    assert list(sampler) == full  # the next iteration is a whole epoch again


def test_default_sampler_new_epoch_starts_at_its_beginning():
    sampler = DefaultSampler(range(10), seed=1)
    sampler.set_consumed(4)
    sampler.set_epoch(1)
    expected = DefaultSampler(range(10), seed=1)
    expected.set_epoch(1)
    assert list(sampler) == list(expected)


def test_default_sampler_restarts_after_an_abandoned_iteration():
    sampler = DefaultSampler(range(10), seed=1)
    full = list(sampler)
    next(iter(sampler))  # e.g. peeking at one batch
    assert sampler.state_dict()["consumed"] == 1
    assert list(sampler) == full


@pytest.mark.parametrize("rank", [0, 1])
def test_infinite_sampler_resumes_from_its_state_across_passes(rank):
    def make(seed):
        return InfiniteSampler(range(5), seed=seed, rank=rank, world_size=2)

    uninterrupted = list(islice(make(8), 20))
    for k in (0, 1, 2, 3, 7, 12):
        original = make(8)
        head = list(islice(original, k))
        state = original.state_dict()
        assert state == dict(seed=8, consumed=k, world_size=2)
        restored = make(None)
        restored.load_state_dict(state)
        assert head + list(islice(restored, 20 - k)) == uninterrupted


def test_infinite_sampler_set_consumed():
    uninterrupted = list(islice(InfiniteSampler(range(4), seed=3), 11))
    sampler = InfiniteSampler(range(4), seed=3)
    sampler.set_consumed(6)
    assert list(islice(sampler, 5)) == uninterrupted[6:]
    assert sampler.state_dict()["consumed"] == 11


def test_resuming_with_another_world_size_continues_the_global_order():
    def ranks(world, sampler_type=DefaultSampler):
        return [sampler_type(range(12), seed=0, rank=r, world_size=world) for r in range(world)]

    global_order = list(DefaultSampler(range(12), seed=0))
    two = ranks(2)
    seen = interleave([list(islice(s, 3)) for s in two])
    three = ranks(3)
    for sampler in three:
        sampler.load_state_dict(two[0].state_dict())
    assert seen + interleave([list(s) for s in three]) == global_order

    stream = list(islice(InfiniteSampler(range(12), seed=0), 30))
    two = ranks(2, InfiniteSampler)
    seen = interleave([list(islice(s, 9)) for s in two])
    three = ranks(3, InfiniteSampler)
    for sampler in three:
        sampler.load_state_dict(two[0].state_dict())
    assert seen + interleave([list(islice(s, 4)) for s in three]) == stream


def test_resuming_with_a_world_size_that_does_not_divide_warns():
    sampler = DefaultSampler(range(12), seed=0, rank=0, world_size=2)
    with pytest.warns(UserWarning, match="seen again"):
        sampler.load_state_dict(dict(epoch=0, seed=0, consumed=1, world_size=3))
    assert sampler.state_dict()["consumed"] == 1


def test_load_state_dict_names_missing_keys():
    with pytest.raises(KeyError, match="lacks \\['epoch'\\]"):
        DefaultSampler(range(3), seed=0).load_state_dict(dict(seed=0, consumed=0, world_size=1))
    with pytest.raises(ValueError, match="non-negative int"):
        InfiniteSampler(range(3), seed=0).set_consumed(-1)
