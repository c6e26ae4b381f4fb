"""Optimizers, optim wrappers and their builders (see docs/optim.md).

Importing this package registers OptimWrapper, AmpOptimWrapper and
DefaultOptimWrapperConstructor; the OPTIM_WRAPPERS and OPTIM_WRAPPER_CONSTRUCTORS registries
import it on their first lookup. ``runnerx.optim.optimizers`` (every ``torch.optim``
optimizer, and the third-party ones MMEngine knows when installed) is loaded by the OPTIMIZERS
registry the same way. Parameter schedulers live in ``runnerx.optim.scheduler``; as in
``mmengine.optim``, their names (``MultiStepLR``, ``_ParamScheduler``, ...) and
``ZeroRedundancyOptimizer`` can be imported from here too, and are loaded when first asked for.
``BaseOptimWrapper`` is :class:`OptimWrapper`, the base class of every runnerx wrapper (see
:mod:`runnerx.optim.optimizer.base`).
"""

from runnerx.optim.amp_optim_wrapper import AmpOptimWrapper
from runnerx.optim.builder import build_optim_wrapper
from runnerx.optim.config_changes import enable_amp, scale_lr
from runnerx.optim.constructor import DefaultOptimWrapperConstructor
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.optim_wrapper_dict import OptimWrapperDict
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS
from runnerx.utils import lazy_attributes

BaseOptimWrapper = OptimWrapper  # MMEngine's base-class name; see runnerx.optim.optimizer.base

#: mmengine.optim's scheduler names, from runnerx.optim.scheduler
_SCHEDULERS = (
    "ConstantLR",
    "ConstantMomentum",
    "ConstantParamScheduler",
    "CosineAnnealingLR",
    "CosineAnnealingMomentum",
    "CosineAnnealingParamScheduler",
    "ExponentialLR",
    "ExponentialMomentum",
    "ExponentialParamScheduler",
    "LinearLR",
    "LinearMomentum",
    "LinearParamScheduler",
    "MultiStepLR",
    "MultiStepMomentum",
    "MultiStepParamScheduler",
    "OneCycleLR",
    "OneCycleParamScheduler",
    "PolyLR",
    "PolyMomentum",
    "PolyParamScheduler",
    "ReduceOnPlateauLR",
    "ReduceOnPlateauMomentum",
    "ReduceOnPlateauParamScheduler",
    "StepLR",
    "StepMomentum",
    "StepParamScheduler",
    "_ParamScheduler",
)

__getattr__ = lazy_attributes(
    __name__,
    {
        **dict.fromkeys(_SCHEDULERS, "runnerx.optim.scheduler"),
        "ZeroRedundancyOptimizer": "runnerx.optim.optimizer.zero_optimizer",
    },
)

__all__ = [
    "OPTIMIZERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "AmpOptimWrapper",
    "BaseOptimWrapper",
    "DefaultOptimWrapperConstructor",
    "OptimWrapper",
    "OptimWrapperDict",
    "ZeroRedundancyOptimizer",
    "build_optim_wrapper",
    "enable_amp",
    "scale_lr",
    *_SCHEDULERS,
]
