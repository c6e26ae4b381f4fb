"""``_InfiniteDataloaderIterator`` at MMEngine's path: custom loops written for MMEngine
(mmagic's) read endless batches from it; each new pass gets the sampler's next epoch."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

from runnerx.data import DefaultSampler
from runnerx.runner.loops import _InfiniteDataloaderIterator

mm_loops = pytest.importorskip("mmengine.runner.loops")


def batches(iterator_class, count: int, **loader_args) -> list[list[int]]:
    dataset = list(range(5))
    sampler = DefaultSampler(dataset, shuffle=True, seed=3)
    loader = DataLoader(dataset, batch_size=2, sampler=sampler, **loader_args)
    iterator = iterator_class(loader)
    assert iter(iterator) is iterator
    return [next(iterator).tolist() for _ in range(count)]


def test_restarts_with_the_next_epochs_order_as_mmengines(monkeypatch):
    monkeypatch.setattr(mm_loops.time, "sleep", lambda seconds: None)  # MMEngine's 2 s pause
    ours = batches(_InfiniteDataloaderIterator, 9)
    assert ours == batches(mm_loops._InfiniteDataloaderIterator, 9)
    passes = [sorted(i for batch in ours[start : start + 3] for i in batch) for start in (0, 3, 6)]
    assert passes == [list(range(5))] * 3
    assert ours[0:3] != ours[3:6]  # a new order each pass: set_epoch was called


def test_the_batch_samplers_sampler_gets_set_epoch():
    dataset = list(range(4))
    sampler = DefaultSampler(dataset, shuffle=True, seed=0)
    batch_sampler = torch.utils.data.BatchSampler(sampler, batch_size=4, drop_last=False)
    iterator = _InfiniteDataloaderIterator(DataLoader(dataset, batch_sampler=batch_sampler))
    next(iterator), next(iterator)
    assert sampler.epoch == 1


def test_an_empty_dataloader_stops_instead_of_spinning():
    iterator = _InfiniteDataloaderIterator(DataLoader([], batch_size=2))
    with pytest.raises(StopIteration):
        next(iterator)
