"""Registries: from a config's ``type`` name to the class or function to build.

See docs/registry.md. Importing this package does not import torch.
"""

from runnerx.registry.build import build_from_cfg
from runnerx.registry.default_scope import DefaultScope, init_default_scope
from runnerx.registry.errors import NotRegisteredError, RegistryKeyError
from runnerx.registry.registry import Registry
from runnerx.registry.root import (
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
)

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
    "DefaultScope",
    "NotRegisteredError",
    "Registry",
    "RegistryKeyError",
    "build_from_cfg",
    "init_default_scope",
]
