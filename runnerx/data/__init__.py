"""Data: samplers (resumable, rank-aware), collate functions, worker seeding, dataloader
building from MMEngine-style configs, and example datasets. See docs/data.md.

Importing this package registers the built-ins in DATASETS, DATA_SAMPLERS and FUNCTIONS.
"""

from runnerx.data.build import build_dataloader
from runnerx.data.collate import default_collate, pseudo_collate
from runnerx.data.examples import CharTextDataset, DigitsDataset
from runnerx.data.samplers import DefaultSampler, InfiniteSampler, ResumableSampler
from runnerx.data.worker_init import worker_init_fn

__all__ = [
    "CharTextDataset",
    "DefaultSampler",
    "DigitsDataset",
    "InfiniteSampler",
    "ResumableSampler",
    "build_dataloader",
    "default_collate",
    "pseudo_collate",
    "worker_init_fn",
]
