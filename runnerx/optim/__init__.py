"""Optimizers, optim wrappers and their builders (see docs/optim.md).

Importing this package registers OptimWrapper, AmpOptimWrapper and
DefaultOptimWrapperConstructor; the OPTIM_WRAPPERS and OPTIM_WRAPPER_CONSTRUCTORS registries
import it on their first lookup. ``runnerx.optim.optimizers`` (every ``torch.optim``
optimizer, and bitsandbytes' when installed) is loaded by the OPTIMIZERS registry the same
way. Parameter schedulers live in ``runnerx.optim.scheduler``, imported separately.
"""

from runnerx.optim.amp_optim_wrapper import AmpOptimWrapper
from runnerx.optim.builder import build_optim_wrapper
from runnerx.optim.config_changes import enable_amp, scale_lr
from runnerx.optim.constructor import DefaultOptimWrapperConstructor
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.optim_wrapper_dict import OptimWrapperDict

__all__ = [
    "AmpOptimWrapper",
    "DefaultOptimWrapperConstructor",
    "OptimWrapper",
    "OptimWrapperDict",
    "build_optim_wrapper",
    "enable_amp",
    "scale_lr",
]
