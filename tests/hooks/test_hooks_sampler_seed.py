"""DistSamplerSeedHook: the samplers learn the epoch."""

from types import SimpleNamespace

from torch.utils.data import BatchSampler, DataLoader, DistributedSampler

from runnerx.hooks import DistSamplerSeedHook

DATASET = list(range(10))


def order(dataloader):
    return [int(i) for batch in dataloader for i in batch]


def test_the_sampler_gets_the_epoch_and_shuffles_anew(runner):
    sampler = DistributedSampler(DATASET, num_replicas=1, rank=0, shuffle=True, seed=0)
    runner.train_dataloader = DataLoader(DATASET, batch_size=5, sampler=sampler)
    hook = DistSamplerSeedHook()
    orders = []
    for epoch in range(3):
        runner.epoch = epoch
        hook.before_train_epoch(runner)
        assert sampler.epoch == epoch
        orders.append(order(runner.train_dataloader))
    assert len({tuple(o) for o in orders}) == 3


def test_the_sampler_inside_a_batch_sampler_gets_the_epoch(runner):
    sampler = DistributedSampler(DATASET, num_replicas=1, rank=0)
    runner.train_dataloader = DataLoader(DATASET, batch_sampler=BatchSampler(sampler, 5, False))
    runner.epoch = 4
    DistSamplerSeedHook().before_train_epoch(runner)
    assert sampler.epoch == 4


def test_samplers_without_set_epoch_are_left_alone(runner):
    runner.train_dataloader = DataLoader(DATASET, batch_size=5, shuffle=True)
    DistSamplerSeedHook().before_train_epoch(runner)
    runner.train_dataloader = SimpleNamespace()  # no sampler at all
    DistSamplerSeedHook().before_train_epoch(runner)


def test_one_sampler_is_told_once(runner):
    calls = []
    shared = SimpleNamespace(set_epoch=calls.append)
    runner.train_dataloader = SimpleNamespace(
        sampler=shared, batch_sampler=SimpleNamespace(sampler=shared)
    )
    runner.epoch = 2
    DistSamplerSeedHook().before_train_epoch(runner)
    assert calls == [2]
