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


class RandomDraws(Dataset):
    """Each item: which worker made it and what its random generators gave."""

    def __len__(self):
        return 4

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


def loader_cfg(**options):
    return dict(
        dataset=RandomDraws(),
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
        batch_size=2,
        num_workers=2,
        **options,
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


def test_persistent_workers_keep_their_streams_going_from_epoch_to_epoch():
    loader = build_dataloader(loader_cfg(persistent_workers=True), seed=4)
    first, second = epoch_draws(loader, 0), epoch_draws(loader, 1)
    assert first != second


def test_the_bound_epoch_pickles_as_the_number_it_is_for_spawned_workers():
    loader = build_dataloader(loader_cfg(), seed=4)
    loader.sampler.set_epoch(5)
    unpickled = pickle.loads(pickle.dumps(loader.worker_init_fn))
    assert unpickled.keywords["epoch"] == 5 and type(unpickled.keywords["epoch"]) is int
    assert int(loader.worker_init_fn.keywords["epoch"]) == 5
