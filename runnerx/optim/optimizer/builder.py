"""MMEngine's ``mmengine.optim.optimizer.builder`` path: ``build_optim_wrapper``, the
registries, and the functions that register the optimizers (see
:mod:`runnerx.optim.optimizers`)."""

from runnerx.optim.builder import build_optim_wrapper
from runnerx.optim.optimizers import (
    BITSANDBYTES_OPTIMIZERS,
    DADAPTATION_OPTIMIZERS,
    LION_OPTIMIZERS,
    SOPHIA_OPTIMIZERS,
    TORCH_OPTIMIZERS,
    TRANSFORMERS_OPTIMIZERS,
    register_bitsandbytes_optimizers,
    register_dadaptation_optimizers,
    register_lion_optimizers,
    register_sophia_optimizers,
    register_torch_optimizers,
    register_transformers_optimizers,
)
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS

__all__ = [
    "BITSANDBYTES_OPTIMIZERS",
    "DADAPTATION_OPTIMIZERS",
    "LION_OPTIMIZERS",
    "OPTIMIZERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "SOPHIA_OPTIMIZERS",
    "TORCH_OPTIMIZERS",
    "TRANSFORMERS_OPTIMIZERS",
    "build_optim_wrapper",
    "register_bitsandbytes_optimizers",
    "register_dadaptation_optimizers",
    "register_lion_optimizers",
    "register_sophia_optimizers",
    "register_torch_optimizers",
    "register_transformers_optimizers",
]
