"""MMEngine's ``mmengine.optim.optimizer`` path, so that ``from mmengine.optim.optimizer import
OptimWrapper`` (and its submodules: ``optimizer_wrapper``, ``amp_optimizer_wrapper``,
``optimizer_wrapper_dict``, ``default_constructor``, ``builder``, ``base``,
``zero_optimizer``) ports by renaming ``mmengine`` to ``runnerx``. The objects are those of
:mod:`runnerx.optim`; see docs/optim.md.
"""

from runnerx.optim.amp_optim_wrapper import AmpOptimWrapper
from runnerx.optim.builder import build_optim_wrapper
from runnerx.optim.constructor import DefaultOptimWrapperConstructor
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.optim_wrapper_dict import OptimWrapperDict
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS
from runnerx.utils import lazy_attributes

from .base import BaseOptimWrapper

# torch.distributed.optim is slow to import: loaded when first asked for
__getattr__ = lazy_attributes(
    __name__, {"ZeroRedundancyOptimizer": "runnerx.optim.optimizer.zero_optimizer"}
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
]
