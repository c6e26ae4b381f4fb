"""runnerx: MMEngine-style configs and registries, and a fast, dependable training Runner.

Only the public API lives here. Importing runnerx does not import torch or anything optional.
"""

from . import registry as _registry
from .config import Config, ConfigDict, DictAction
from .registry import *  # noqa: F403  (the root registries, Registry, build_from_cfg, ...)
from .version import __version__

__all__ = ["Config", "ConfigDict", "DictAction", "__version__", *_registry.__all__]
