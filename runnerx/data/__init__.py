"""Data: MMEngine's BaseDataset, transform pipeline (Compose) and dataset wrappers, samplers
(resumable, rank-aware), collate functions, worker seeding, dataloader building from
MMEngine-style configs, and example datasets. See docs/data.md.

Importing this package registers the built-ins in DATASETS, DATA_SAMPLERS, TRANSFORMS and
FUNCTIONS. ``COLLATE_FUNCTIONS`` is MMEngine's other name for FUNCTIONS (the same registry), so
``@COLLATE_FUNCTIONS.register_module()`` on a collate function works as in MMEngine.
"""

from runnerx.data.base_dataset import BaseDataset, force_full_init
from runnerx.data.build import build_dataloader, stop_workers
from runnerx.data.collate import default_collate, pseudo_collate
from runnerx.data.dataset_wrappers import ClassBalancedDataset, ConcatDataset, RepeatDataset
from runnerx.data.examples import CharTextDataset, DigitsDataset
from runnerx.data.samplers import DefaultSampler, InfiniteSampler, ResumableSampler
from runnerx.data.transforms import Compose, TestTimeAug
from runnerx.data.worker_init import worker_init_fn
from runnerx.registry import FUNCTIONS as COLLATE_FUNCTIONS

__all__ = [
    "COLLATE_FUNCTIONS",
    "BaseDataset",
    "CharTextDataset",
    "ClassBalancedDataset",
    "Compose",
    "ConcatDataset",
    "DefaultSampler",
    "DigitsDataset",
    "InfiniteSampler",
    "RepeatDataset",
    "ResumableSampler",
    "TestTimeAug",
    "build_dataloader",
    "default_collate",
    "force_full_init",
    "pseudo_collate",
    "stop_workers",
    "worker_init_fn",
]
