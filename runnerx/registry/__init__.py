"""Registries: from a config's ``type`` name to the class or function to build.

See docs/registry.md. Importing this package does not import torch.
"""

from runnerx.registry.build import build_from_cfg
from runnerx.registry.build_functions import (
    build_model_from_cfg,
    build_runner_from_cfg,
    build_scheduler_from_cfg,
)
from runnerx.registry.default_scope import DefaultScope, init_default_scope
from runnerx.registry.errors import NotRegisteredError, RegistryKeyError
from runnerx.registry.registry import Registry
from runnerx.registry.root import (
    DATA_SAMPLERS,
    DATASETS,
    EVALUATOR,
    FUNCTIONS,
    HOOKS,
    INFERENCERS,
    LOG_PROCESSORS,
    LOOPS,
    METRICS,
    MODEL_WRAPPERS,
    MODELS,
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    PARAM_SCHEDULERS,
    RUNNER_CONSTRUCTORS,
    RUNNERS,
    STRATEGIES,
    TASK_UTILS,
    TRANSFORMS,
    VISBACKENDS,
    VISUALIZERS,
    WEIGHT_INITIALIZERS,
)
from runnerx.registry.utils import count_registered_modules, traverse_registry_tree

__all__ = [
    "DATASETS",
    "DATA_SAMPLERS",
    "EVALUATOR",
    "FUNCTIONS",
    "HOOKS",
    "INFERENCERS",
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
    "RUNNER_CONSTRUCTORS",
    "STRATEGIES",
    "TASK_UTILS",
    "TRANSFORMS",
    "VISBACKENDS",
    "VISUALIZERS",
    "WEIGHT_INITIALIZERS",
    "DefaultScope",
    "NotRegisteredError",
    "Registry",
    "RegistryKeyError",
    "build_from_cfg",
    "build_model_from_cfg",
    "build_runner_from_cfg",
    "build_scheduler_from_cfg",
    "count_registered_modules",
    "init_default_scope",
    "traverse_registry_tree",
]
