"""MMEngine's ``mmengine.dataset.base_dataset`` path: runnerx's BaseDataset, Compose and
force_full_init (see :mod:`runnerx.data`)."""

from runnerx.data.base_dataset import BaseDataset, force_full_init
from runnerx.data.transforms import Compose

__all__ = ["BaseDataset", "Compose", "force_full_init"]
