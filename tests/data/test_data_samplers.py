"""DefaultSampler and InfiniteSampler in one process: rank/world arguments, orders, lengths."""

from itertools import islice

import pytest
import torch

from runnerx.data import DefaultSampler, InfiniteSampler
from runnerx.registry import DATA_SAMPLERS


def test_samplers_are_registered_under_mmengine_names():
    assert DATA_SAMPLERS.get("DefaultSampler") is DefaultSampler
    assert DATA_SAMPLERS.get("InfiniteSampler") is InfiniteSampler


def test_default_sampler_shuffles_with_a_generator_seeded_by_seed_plus_epoch():
    sampler = DefaultSampler(range(10), shuffle=True, seed=7)
    expected = torch.randperm(10, generator=torch.Generator().manual_seed(7)).tolist()
    assert list(sampler) == expected
    sampler.set_epoch(2)
    expected = torch.randperm(10, generator=torch.Generator().manual_seed(9)).tolist()
    assert list(sampler) == expected


def test_default_sampler_without_shuffle_is_in_order():
    assert list(DefaultSampler(range(5), shuffle=False, seed=0)) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("size", [1, 2, 5, 7])
def test_round_up_pads_from_the_start_and_ranks_interleave(size):
    world = 3
    ranks = [
        list(DefaultSampler(range(size), shuffle=False, seed=0, rank=r, world_size=world))
        for r in range(world)
    ]
    padded = [i % size for i in range(-(-size // world) * world)]
    assert ranks == [padded[r::world] for r in range(world)]
    assert {len(r) for r in ranks} == {len(ranks[0])}


def test_without_round_up_last_ranks_get_fewer_and_len_is_per_rank():
    samplers = [
        DefaultSampler(range(7), shuffle=False, seed=0, round_up=False, rank=r, world_size=3)
        for r in range(3)
    ]
    assert [list(s) for s in samplers] == [[0, 3, 6], [1, 4], [2, 5]]
    assert [len(s) for s in samplers] == [3, 2, 2]


def test_rank_and_world_size_arguments_are_checked():
    with pytest.raises(ValueError, match="rank must be an int in"):
        DefaultSampler(range(4), seed=0, rank=2, world_size=2)
    with pytest.raises(ValueError, match="world_size must be a positive int"):
        InfiniteSampler(range(4), seed=0, rank=0, world_size=0)
    with pytest.raises(TypeError, match="seed must be an int or None"):
        DefaultSampler(range(4), seed="1")


def test_seed_none_draws_a_seed_from_numpy_which_the_runner_seeds():
    import numpy as np

    np.random.seed(123)
    first = DefaultSampler(range(4), seed=None).seed
    assert DefaultSampler(range(4), seed=None).seed != first
    np.random.seed(123)
    assert DefaultSampler(range(4), seed=None).seed == first


def test_infinite_sampler_is_endless_and_each_pass_is_a_new_permutation():
    sampler = InfiniteSampler(range(5), shuffle=True, seed=1)
    stream = list(islice(sampler, 20))
    passes = [stream[i : i + 5] for i in range(0, 20, 5)]
    assert all(sorted(p) == list(range(5)) for p in passes)
    assert len({tuple(p) for p in passes}) > 1
    assert len(sampler) == 5


def test_infinite_sampler_splits_the_stream_by_rank():
    whole = list(islice(InfiniteSampler(range(5), seed=4), 30))
    ranks = [
        list(islice(InfiniteSampler(range(5), seed=4, rank=r, world_size=3), 10)) for r in range(3)
    ]
    assert ranks == [whole[r::3] for r in range(3)]
    assert len(InfiniteSampler(range(5), seed=4, rank=0, world_size=3)) == 2


def test_infinite_sampler_size_is_the_dataset_length_on_every_rank():
    samplers = [InfiniteSampler(range(7), seed=0, rank=r, world_size=3) for r in range(3)]
    assert [sampler.size for sampler in samplers] == [7, 7, 7]
    assert [len(sampler) for sampler in samplers] == [3, 3, 3]  # each rank's share of a pass


def test_infinite_sampler_rejects_an_empty_dataset():
    with pytest.raises(ValueError, match="non-empty"):
        InfiniteSampler([], seed=0)


def test_infinite_sampler_continues_the_stream_in_a_new_iteration():
    sampler = InfiniteSampler(range(6), seed=2)
    first = list(islice(sampler, 4))
    second = list(islice(sampler, 4))
    assert first + second == list(islice(InfiniteSampler(range(6), seed=2), 8))
