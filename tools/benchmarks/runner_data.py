"""The data that tools/benchmark_runner.py's loops read, in its two modes.

``loader``: a real ``torch.utils.data.DataLoader`` over a fixed map-style dataset of per-sample
dicts (``num_workers=0``, seeded shuffling, samples stacked by a default collate), as
hand-written loops and Runners read their data. Runners get it through their usual config
(``DefaultSampler``, ``default_collate``) and train by epochs; the plain loop builds the
equivalent torch DataLoader (``RandomSampler`` with a seeded generator, torch's
``default_collate``) over the same dataset object and starts a new pass whenever one ends.

``batches``: precomputed, collated batches cycled forever, so that the data costs nothing and
the framework's own cost stands alone (the stricter figure); Runners train by iterations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils.data import DataLoader, Dataset, RandomSampler, default_collate

MODES = ("loader", "batches")
SEED = 0  # the Runners' randomness seed, hence their DefaultSampler's seed
#: arch: (batch size, input shape)
SHAPES = {"mlp": (64, (32,)), "cnn": (32, (1, 28, 28))}
#: batches per pass over the dataset in 'loader' mode (its size is this times the batch size)
BATCHES_PER_EPOCH = 100


def make_batches(arch: str, count: int = 64) -> list[dict[str, torch.Tensor]]:
    """``count`` collated batches of random inputs and labels (the same for every loop)."""
    batch_size, shape = SHAPES[arch]
    generator = torch.Generator().manual_seed(0)
    return [
        {
            "inputs": torch.randn(batch_size, *shape, generator=generator),
            "data_samples": torch.randint(0, 10, (batch_size,), generator=generator),
        }
        for _ in range(count)
    ]


class SampleDicts(Dataset):
    """A fixed map-style dataset of ``BATCHES_PER_EPOCH`` batches' worth of random samples,
    each ``dict(inputs=Tensor, data_samples=int label)``, made when it is indexed."""

    def __init__(self, arch: str) -> None:
        batch_size, shape = SHAPES[arch]
        generator = torch.Generator().manual_seed(1)
        size = BATCHES_PER_EPOCH * batch_size
        self.inputs = torch.randn(size, *shape, generator=generator)
        self.labels = torch.randint(0, 10, (size,), generator=generator).tolist()

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.inputs[index], "data_samples": self.labels[index]}


class CycledBatches(DataLoader):
    """A DataLoader (so MMEngine accepts it) that cycles through precomputed batches forever:
    every loop pays the same, near-zero, data cost, and no Runner reaches an epoch end."""

    def __init__(self, batches: list) -> None:
        super().__init__(batches, batch_size=1)  # batch_size=1 gives MMEngine a batch sampler
        self.batches = batches

    def __iter__(self) -> Any:
        return itertools.cycle(self.batches)


def runner_data_settings(mode: str, arch: str, iters: int) -> dict[str, Any]:
    """The Runner settings that make it read ``mode``'s data for ``iters`` iterations:
    ``train_dataloader``, ``train_cfg`` and ``log_processor``."""
    if mode == "batches":
        return dict(
            train_dataloader=CycledBatches(make_batches(arch)),
            train_cfg=dict(by_epoch=False, max_iters=iters, val_interval=iters + 1),
            log_processor=dict(by_epoch=False),
        )
    # By epochs: MMEngine's iteration-based loop sleeps 2 s whenever a finite sampler's pass
    # ends, and a hand-written loop over a DataLoader is an epoch loop anyway.
    epochs = iters // BATCHES_PER_EPOCH
    return dict(
        train_dataloader=dict(
            dataset=SampleDicts(arch),
            batch_size=SHAPES[arch][0],
            num_workers=0,
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=True, max_epochs=epochs, val_interval=epochs + 1),
        log_processor=dict(by_epoch=True),
    )


def _endless(loader: DataLoader) -> Iterator[Any]:
    while True:
        yield from loader


def plain_batches(mode: str, runner_loader: Any) -> Iterator[Any]:
    """The plain loop's endless stream of batches, from the data the Runner reads: the same
    precomputed batches, or a torch DataLoader of its own over the same dataset. Its first
    pass has the order of the Runner's first epoch (both permute with a generator seeded
    with SEED); later passes differ (DefaultSampler reseeds with ``SEED + epoch``)."""
    if mode == "batches":
        return itertools.cycle(runner_loader.batches)
    dataset = runner_loader.dataset
    sampler = RandomSampler(dataset, generator=torch.Generator().manual_seed(SEED))
    loader = DataLoader(
        dataset, batch_size=runner_loader.batch_size, sampler=sampler, collate_fn=default_collate
    )
    return _endless(loader)
