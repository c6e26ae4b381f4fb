"""The Runner and its loops (the `locations` entry of the LOOPS and RUNNERS registries), and
the other names ``mmengine.runner`` offers, so that ported code changes only its imports.

The submodules ``checkpoint``, ``amp`` and ``priority`` are MMEngine's paths of the same names
(``from runnerx.runner.checkpoint import _load_checkpoint``)."""

from runnerx.utils import lazy_attributes

from .environment import set_random_seed
from .loops import (
    BaseLoop,
    EpochBasedTrainLoop,
    IterBasedTrainLoop,
    TestLoop,
    ValLoop,
    build_eval_loop,
    build_train_loop,
)
from .runner import Runner

#: mmengine.runner's other names, imported when first asked for (the modules they live in
#: import runnerx.runner themselves)
__getattr__ = lazy_attributes(
    __name__,
    {
        "CheckpointLoader": "runnerx.checkpoint.loader",
        "get_state_dict": "runnerx.checkpoint.model_state",
        "load_checkpoint": "runnerx.checkpoint.model_state",
        "load_state_dict": "runnerx.checkpoint.model_state",
        "save_checkpoint": "runnerx.checkpoint.model_state",
        "weights_to_cpu": "runnerx.checkpoint.model_state",
        "find_latest_checkpoint": "runnerx.checkpoint.runner_state",
        **dict.fromkeys(
            (
                "get_deprecated_model_names",
                "get_external_models",
                "get_mmcls_models",
                "get_torchvision_models",
            ),
            "runnerx.checkpoint.model_zoo",
        ),
        "FlexibleRunner": "runnerx.runner.mmengine_api",
        "Priority": "runnerx.hooks.hook",
        "get_priority": "runnerx.hooks.hook",
        "LogProcessor": "runnerx.logging.log_processor",
        "autocast": "runnerx.optim.amp_optim_wrapper",
        "turn_on_activation_checkpointing": "runnerx.parallel.activation_checkpointing",
    },
)


__all__ = [
    "BaseLoop",
    "CheckpointLoader",
    "EpochBasedTrainLoop",
    "FlexibleRunner",
    "IterBasedTrainLoop",
    "LogProcessor",
    "Priority",
    "Runner",
    "TestLoop",
    "ValLoop",
    "autocast",
    "build_eval_loop",
    "build_train_loop",
    "find_latest_checkpoint",
    "get_deprecated_model_names",
    "get_external_models",
    "get_mmcls_models",
    "get_priority",
    "get_state_dict",
    "get_torchvision_models",
    "load_checkpoint",
    "load_state_dict",
    "save_checkpoint",
    "set_random_seed",
    "turn_on_activation_checkpointing",
    "weights_to_cpu",
]
