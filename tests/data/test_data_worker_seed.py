"""worker_init_fn: dataloader workers draw different random numbers per worker, rank and
epoch, and the same ones in every run with the same seed."""

import functools
import pickle
import random

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

from runnerx.data import build_dataloader, worker_init_fn
from runnerx.data.worker_init import SeededBatch, WorkerSeededLoader


class RandomDraws(Dataset):
    """Each item: which worker made it and what its random generators gave."""

    def __init__(self, size=4):
        self.size = size

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        return dict(
            worker=get_worker_info().id,
            torch=torch.rand(()).item(),
            python=random.random(),
            numpy=float(np.random.rand()),
        )


def draws(rank, seed, **epoch):
    init = functools.partial(worker_init_fn, num_workers=2, rank=rank, seed=seed, **epoch)
    loader = DataLoader(RandomDraws(), batch_size=None, num_workers=2, worker_init_fn=init)
    return [(item["worker"], item["torch"], item["python"], item["numpy"]) for item in loader]


@pytest.mark.parametrize(
    ("epoch", "expected_base"),
    [
        (dict(), 10 + 2 * 1),  # MMEngine's arguments: seed + num_workers * rank
        (dict(epoch=3, world_size=4), 10 + (3 * 4 + 1) * 2),
    ],
)
def test_workers_are_seeded_by_epoch_rank_worker_id_and_seed(epoch, expected_base):
    first_items = {item[0]: item for item in reversed(draws(rank=1, seed=10, **epoch))}
    assert sorted(first_items) == [0, 1]
    for worker_id, (_, torch_draw, python_draw, numpy_draw) in first_items.items():
        expected_seed = expected_base + worker_id
        assert (
            torch_draw
            == torch.rand((), generator=torch.Generator().manual_seed(expected_seed)).item()
        )
        assert python_draw == random.Random(expected_seed).random()
        assert numpy_draw == np.random.RandomState(expected_seed).rand()


def test_draws_differ_by_worker_and_rank_and_repeat_with_the_same_seed():
    rank0, rank1 = draws(rank=0, seed=3), draws(rank=1, seed=3)
    assert draws(rank=0, seed=3) == rank0
    assert rank0[0][0] != rank0[1][0]  # the first two items come from different workers
    assert rank0[0][1:] != rank0[1][1:]
    assert {item[1] for item in rank0}.isdisjoint(item[1] for item in rank1)


def loader_cfg(size=4, **options):
    return (
        dict(
            dataset=RandomDraws(size),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=dict(type="default_collate"),
            batch_size=2,
            num_workers=2,
        )
        | options
    )


def epoch_draws(loader, epoch):
    loader.sampler.set_epoch(epoch)  # what DistSamplerSeedHook does before each epoch
    return [value for batch in loader for value in batch["numpy"].tolist()]


def test_build_dataloader_with_a_seed_seeds_its_workers():
    cfg = loader_cfg()
    runs = [[batch["torch"].tolist() for batch in build_dataloader(cfg, seed=4)] for _ in "ab"]
    assert runs[0] == runs[1]
    unseeded = [batch["torch"].tolist() for batch in build_dataloader(cfg)]
    assert unseeded != runs[0]


def test_workers_started_each_epoch_draw_anew_and_a_resumed_epoch_draws_the_same():
    loader = build_dataloader(loader_cfg(), seed=4)
    epochs = [epoch_draws(loader, epoch) for epoch in range(3)]
    # MMEngine's constant worker seeds would repeat the same augmentation every epoch
    assert len({tuple(draws) for draws in epochs}) == 3
    # a run resumed at epoch 2 (a new loader) draws exactly what the unbroken run drew there
    assert epoch_draws(build_dataloader(loader_cfg(), seed=4), 2) == epochs[2]


def test_persistent_workers_draw_anew_each_epoch_and_what_a_new_loader_draws():
    loader = build_dataloader(loader_cfg(persistent_workers=True), seed=4)
    first, second = epoch_draws(loader, 0), epoch_draws(loader, 1)
    assert first != second
    # a run resumed at epoch 1 starts its workers there and still draws what they drew
    assert epoch_draws(build_dataloader(loader_cfg(persistent_workers=True), seed=4), 1) == second


@pytest.mark.parametrize("persistent_workers", [False, True])
def test_a_batch_draws_the_same_whichever_worker_reads_it_and_wherever_a_run_resumed(
    persistent_workers,
):
    cfg = loader_cfg(size=12, persistent_workers=persistent_workers)
    unbroken = build_dataloader(cfg, seed=7)
    epochs = [epoch_draws(unbroken, epoch) for epoch in range(2)]
    # a run resumed 2 batches into epoch 1: the sampler skips what was consumed
    resumed = build_dataloader(loader_cfg(size=12, persistent_workers=persistent_workers), seed=7)
    resumed.sampler.set_epoch(1)
    resumed.sampler.set_consumed(4)
    assert epoch_draws(resumed, 1) == epochs[1][4:]
    # another number of workers reads the same batches with the same draws
    one_worker = build_dataloader(loader_cfg(size=12, num_workers=1), seed=7)
    assert [epoch_draws(one_worker, epoch) for epoch in range(2)] == epochs


def test_only_runnerx_seeded_worker_loaders_reseed_per_batch():
    assert type(build_dataloader(loader_cfg(), seed=4)) is WorkerSeededLoader
    assert type(build_dataloader(loader_cfg(num_workers=0), seed=4)) is (DataLoader)
    own_init = loader_cfg(worker_init_fn=None)
    assert type(build_dataloader(own_init, seed=4)) is DataLoader
    loader = build_dataloader(loader_cfg(), seed=4)
    assert loader.batch_size == 2 and len(loader) == 2  # still a DataLoader's attributes


def test_a_seeded_batch_seeds_only_in_a_worker_and_pickles_with_its_seed():
    batch = SeededBatch([3, 1], seed=11)
    state = torch.random.get_rng_state()
    assert list(batch) == [3, 1]
    assert torch.equal(torch.random.get_rng_state(), state)  # the main process is left alone
    copy = pickle.loads(pickle.dumps(batch))
    assert type(copy) is SeededBatch and copy == [3, 1] and copy.seed == 11


def test_the_bound_epoch_pickles_as_the_number_it_is_for_spawned_workers():
    loader = build_dataloader(loader_cfg(), seed=4)
    loader.sampler.set_epoch(5)
    unpickled = pickle.loads(pickle.dumps(loader.worker_init_fn))
    assert unpickled.keywords["epoch"] == 5 and type(unpickled.keywords["epoch"]) is int
    assert int(loader.worker_init_fn.keywords["epoch"]) == 5
