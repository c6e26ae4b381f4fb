"""MMEngine's ``mmengine.dataset.utils`` path: the collate functions, their registry under
MMEngine's name ``COLLATE_FUNCTIONS`` (runnerx's FUNCTIONS) and the worker seeding function."""

from runnerx.data.collate import default_collate, pseudo_collate
from runnerx.data.worker_init import worker_init_fn
from runnerx.registry import FUNCTIONS as COLLATE_FUNCTIONS

__all__ = ["COLLATE_FUNCTIONS", "default_collate", "pseudo_collate", "worker_init_fn"]
