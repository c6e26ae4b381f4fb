"""worker_init_fn: dataloader workers draw different random numbers per worker and rank,
and the same ones in every run with the same seed."""

import functools
import random

import numpy as np
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


def draws(rank, seed):
    loader = DataLoader(
        RandomDraws(),
        batch_size=None,
        num_workers=2,
        worker_init_fn=functools.partial(worker_init_fn, num_workers=2, rank=rank, seed=seed),
    )
    return [(item["worker"], item["torch"], item["python"], item["numpy"]) for item in loader]


def test_workers_are_seeded_by_rank_worker_id_and_seed():
    first_items = {item[0]: item for item in reversed(draws(rank=1, seed=10))}
    for worker_id, (_, torch_draw, python_draw, numpy_draw) in first_items.items():
        expected_seed = 2 * 1 + worker_id + 10
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


def test_build_dataloader_with_a_seed_seeds_its_workers():
    cfg = dict(
        dataset=RandomDraws(),
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
        batch_size=2,
        num_workers=2,
    )
    runs = [[batch["torch"].tolist() for batch in build_dataloader(cfg, seed=4)] for _ in "ab"]
    assert runs[0] == runs[1]
    unseeded = [batch["torch"].tolist() for batch in build_dataloader(cfg)]
    assert unseeded != runs[0]
