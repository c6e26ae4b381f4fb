"""MMEngine's FlexibleRunner strategies as runnerx strategies (``STRATEGIES`` entries).

.. code-block:: python

    runner_type = 'FlexibleRunner'
    strategy = dict(type='DDPStrategy', model_wrapper=dict(find_unused_parameters=True))
    strategy = dict(type='FSDPStrategy', model_wrapper=dict(sharding_strategy='SHARD_GRAD_OP'))

* ``SingleDeviceStrategy``: the model as it is, its SyncBatchNorm layers made plain BatchNorm
  again (as MMEngine does);
* ``DDPStrategy(model_wrapper=None, sync_bn=None)``: runnerx's DDP; ``model_wrapper`` holds
  the DDP arguments (``broadcast_buffers=False`` without it, torch's default with it, as in
  MMEngine) or names another ``MODEL_WRAPPERS`` type;
* ``FSDPStrategy(model_wrapper=None, skip_init_weights=False, state_dict_cfg='local',
  activation_checkpointing=None, sync_bn=None)``: runnerx's FSDP2, the FSDP1 options mapped
  by :mod:`runnerx.parallel.mmengine_fsdp`;
* ``DeepSpeedStrategy``, ``ColossalAIStrategy``: an error saying what to use instead.

``sync_bn`` is read by :func:`~runnerx.parallel.prepare_model` (``strategy.sync_bn``). The
arguments FlexibleRunner fills in from top-level keys (``work_dir``, ``experiment_name``,
``env_kwargs``, ``log_kwargs``, ``auto_scale_lr``) are errors here: runnerx's Runner reads
those keys from the top level of the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

from torch import nn

from runnerx.registry import MODEL_WRAPPERS, STRATEGIES

from .activation_checkpointing import apply_activation_checkpointing
from .ddp import DistributedDataParallelModel, check_ddp_options
from .mmengine_fsdp import checkpointing_options, fsdp_options
from .options import check_keys
from .strategies import build_model_wrapper, distributed_data_parallel, fully_sharded
from .sync_bn import revert_sync_batchnorm

#: BaseStrategy's arguments, which FlexibleRunner sets from these top-level keys
RUNNER_LEVEL_KEYS = {
    "work_dir": "work_dir",
    "experiment_name": "experiment_name",
    "env_kwargs": "env_cfg, launcher and randomness",
    "log_kwargs": "log_level",
    "auto_scale_lr": "auto_scale_lr",
}


@STRATEGIES.register_module(name="SingleDeviceStrategy")
def single_device_strategy(module: nn.Module, **options: Any) -> nn.Module:
    """MMEngine's ``SingleDeviceStrategy``: the model as it is, with every SyncBatchNorm layer
    turned back into BatchNorm (same parameters and statistics)."""
    check_strategy_options(options, (), "SingleDeviceStrategy")
    return revert_sync_batchnorm(module)


@STRATEGIES.register_module(name="DDPStrategy")
def ddp_strategy(
    module: nn.Module, model_wrapper: Mapping | None = None, **options: Any
) -> nn.Module:
    """MMEngine's ``DDPStrategy``: runnerx's DDP with ``model_wrapper``'s arguments, or the
    ``MODEL_WRAPPERS`` type it names; outside a distributed run, the model itself."""
    check_strategy_options(options, ("model_wrapper",), "DDPStrategy")
    if model_wrapper is None:
        return distributed_data_parallel(
            module, _name="DDPStrategy"
        )  # MMEngine's default: broadcast_buffers=False
    if not isinstance(model_wrapper, Mapping):
        raise TypeError(f"strategy.model_wrapper must be a dict, but got {model_wrapper!r}")
    wrapper = dict(model_wrapper)
    kind = wrapper.pop("type", "MMDistributedDataParallel")
    wrapper_class = MODEL_WRAPPERS.get(kind) if isinstance(kind, str) else kind
    if wrapper_class is DistributedDataParallelModel:
        check_ddp_options(wrapper, "strategy.model_wrapper")
        # a model_wrapper of its own leaves broadcast_buffers to torch's default in MMEngine
        wrapper.setdefault("broadcast_buffers", True)
        return distributed_data_parallel(module, _name="DDPStrategy", **wrapper)
    return build_model_wrapper(module, {"type": kind, **wrapper})


@STRATEGIES.register_module(name="FSDPStrategy")
def fsdp_strategy(module: nn.Module, **options: Any) -> nn.Module:
    """MMEngine's ``FSDPStrategy``: runnerx's FSDP2 with the FSDP1 options of ``model_wrapper``
    and the strategy's own mapped (:func:`~runnerx.parallel.mmengine_fsdp.fsdp_options`), the
    modules ``activation_checkpointing.check_fn`` picks checkpointed before sharding."""
    own = ("model_wrapper", "skip_init_weights", "state_dict_cfg", "activation_checkpointing")
    check_strategy_options(options, own, "FSDPStrategy")
    checkpointing = options.pop("activation_checkpointing", None)
    sharding = fsdp_options(module, **options)  # FSDP1 picks its units before checkpointing
    apply_activation_checkpointing(module, checkpointing_options(module, checkpointing))
    return fully_sharded(module, _name="FSDPStrategy", **sharding)


@MODEL_WRAPPERS.register_module(name="MMFullyShardedDataParallel")
def mm_fully_sharded_data_parallel(module: nn.Module, **model_wrapper: Any) -> nn.Module:
    """MMEngine's ``model_wrapper_cfg=dict(type='MMFullyShardedDataParallel', ...)``, with
    which its Runner wraps the model in distributed runs: runnerx's FSDP2 with the FSDP1
    options mapped as for FSDPStrategy's ``model_wrapper``. Checkpoints are whole files, as
    FSDP1's default (full) state dict gives them."""
    options = fsdp_options(
        module,
        {"type": "MMFullyShardedDataParallel", **model_wrapper},
        state_dict_cfg="full",
        wrapper_key="model_wrapper_cfg",
    )
    return fully_sharded(module, _name="MMFullyShardedDataParallel", **options)


@STRATEGIES.register_module(name="DeepSpeedStrategy")
def deepspeed_strategy(module: nn.Module, **options: Any) -> NoReturn:
    """MMEngine's ``DeepSpeedStrategy``: not run by runnerx (an error saying what to use)."""
    _refuse(
        "DeepSpeedStrategy",
        "DeepSpeed's ZeRO stages",
        "ZeRO-2 and ZeRO-3 are FSDP2's sharding='zero2' and 'zero3': use "
        "strategy=dict(type='FSDPStrategy', model_wrapper=dict(sharding_strategy="
        "'SHARD_GRAD_OP' or 'FULL_SHARD')) or runnerx's dict(type='FSDP', sharding='zero2'), "
        "and optim_wrapper=dict(type='AmpOptimWrapper', dtype='bfloat16') for bf16",
    )


@STRATEGIES.register_module(name="ColossalAIStrategy")
def colossalai_strategy(module: nn.Module, **options: Any) -> NoReturn:
    """MMEngine's ``ColossalAIStrategy``: not run by runnerx (an error saying what to use)."""
    _refuse(
        "ColossalAIStrategy",
        "ColossalAI's plugins (Gemini, LowLevelZero)",
        "for sharded parameters, gradients and optimizer state use "
        "strategy=dict(type='FSDPStrategy') or runnerx's dict(type='FSDP', sharding='zero3'), "
        "and optim_wrapper=dict(type='AmpOptimWrapper', dtype='bfloat16') for mixed precision",
    )


def check_strategy_options(options: Mapping[str, Any], own: tuple[str, ...], kind: str) -> None:
    """Refuse the BaseStrategy arguments that runnerx reads from the top level of the config,
    then any key ``kind`` does not take."""
    for key, top_level in RUNNER_LEVEL_KEYS.items():
        if key in options:
            raise ValueError(
                f"strategy.{key}: MMEngine's FlexibleRunner passes it to {kind} from the "
                f"config's top level; runnerx reads it there: set {top_level} at the top level "
                "of the config instead"
            )
    check_keys(options, own, "strategy")


def _refuse(kind: str, what: str, instead: str) -> NoReturn:
    raise ValueError(
        f"strategy=dict(type={kind!r}) runs the model with {what}, which runnerx does not "
        f"run; {instead}"
    )
