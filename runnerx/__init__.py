"""runnerx: MMEngine-style configs and registries, and a fast, dependable training Runner.

Only the public API lives here. Importing runnerx does not import torch or anything optional.
"""

from .config import Config, ConfigDict, DictAction
from .registry import (
    DATA_SAMPLERS,
    DATASETS,
    EVALUATOR,
    FUNCTIONS,
    HOOKS,
    LOG_PROCESSORS,
    LOOPS,
    METRICS,
    MODEL_WRAPPERS,
    MODELS,
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    PARAM_SCHEDULERS,
    RUNNERS,
    STRATEGIES,
    TRANSFORMS,
    VISBACKENDS,
    VISUALIZERS,
    DefaultScope,
    Registry,
    build_from_cfg,
)
from .version import __version__

__all__ = [
    "DATASETS",
    "DATA_SAMPLERS",
    "EVALUATOR",
    "FUNCTIONS",
    "HOOKS",
    "LOG_PROCESSORS",
    "LOOPS",
    "METRICS",
    "MODELS",
    "MODEL_WRAPPERS",
    "OPTIMIZERS",
    "OPTIM_WRAPPERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "PARAM_SCHEDULERS",
    "RUNNERS",
    "STRATEGIES",
    "TRANSFORMS",
    "VISBACKENDS",
    "VISUALIZERS",
    "Config",
    "ConfigDict",
    "DefaultScope",
    "DictAction",
    "Registry",
    "__version__",
    "build_from_cfg",
]
