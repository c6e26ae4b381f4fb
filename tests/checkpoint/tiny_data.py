"""The data of the checkpoint tests' runs: the same 8 samples for the runnerx Runner
(conftest.py) and for MMEngine's (mmengine_writer.py, which imports this module from its own
folder). Needs torch only."""

import torch
from torch.utils.data import Dataset


class TinyData(Dataset):
    """8 fixed samples: 4 random features and a label."""

    def __len__(self) -> int:
        return 8

    def __getitem__(self, index: int) -> dict:
        features = torch.randn(4, generator=torch.Generator().manual_seed(index))
        return {"inputs": features, "data_samples": torch.tensor(index % 2)}


def loader(shuffle: bool) -> dict:
    """A dataloader config (the same for both Runners): batches of 2, DefaultSampler."""
    return {
        "dataset": TinyData(),
        "batch_size": 2,
        "sampler": {"type": "DefaultSampler", "shuffle": shuffle},
        "collate_fn": {"type": "default_collate"},
    }


def sample_indices(inputs: torch.Tensor) -> list[int]:
    """The TinyData indices of a batch's ``inputs`` rows (each sample's features are its own)."""
    features = [TinyData()[index]["inputs"] for index in range(len(TinyData()))]
    return [next(i for i, row in enumerate(features) if torch.equal(row, x)) for x in inputs]
