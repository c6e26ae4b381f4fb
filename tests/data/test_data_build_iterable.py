"""build_dataloader with an IterableDataset: no sampler (None, left out, or a loop's default),
a given sampler or num_batch_per_epoch refused naming the key."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import IterableDataset

from runnerx.data.build import LoopDefaultSampler, build_dataloader


class Numbers(IterableDataset):
    def __iter__(self):
        return iter(torch.arange(6.0))


@pytest.mark.parametrize(
    "sampler",
    [{"sampler": None}, {}, {"sampler": LoopDefaultSampler(type="DefaultSampler", shuffle=True)}],
    ids=["None", "left out", "loop default"],
)
def test_an_iterable_dataset_gets_no_sampler(sampler):
    loader = build_dataloader({"dataset": Numbers(), "batch_size": 4, **sampler}, seed=0)
    assert [[float(x) for x in batch] for batch in loader] == [[0, 1, 2, 3], [4, 5]]


def test_a_loop_default_sampler_is_built_for_a_map_style_dataset():
    default = LoopDefaultSampler(type="DefaultSampler", shuffle=False)
    loader = build_dataloader({"dataset": list(range(5)), "batch_size": 5, "sampler": default})
    assert type(loader.sampler).__name__ == "DefaultSampler"
    assert next(iter(loader)) == list(range(5))


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("sampler", {"type": "DefaultSampler"}, r"val_dataloader\.sampler=\{'type'"),
        ("num_batch_per_epoch", 1, r"val_dataloader\.num_batch_per_epoch cuts the dataset"),
    ],
)
def test_what_an_iterable_dataset_cannot_take_is_refused_naming_the_key(key, value, message):
    with pytest.raises(ValueError, match=message + r".*Numbers, is an IterableDataset"):
        build_dataloader({"dataset": Numbers(), key: value}, cfg_key="val_dataloader")


def test_a_map_style_dataset_still_needs_a_sampler():
    with pytest.raises(Exception, match=r"train_dataloader\.sampler is missing"):
        build_dataloader({"dataset": list(range(4)), "sampler": None})
