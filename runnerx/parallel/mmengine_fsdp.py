"""MMEngine's ``FSDPStrategy`` options (FSDP1: ``FullyShardedDataParallel``) as runnerx's FSDP2
options (:class:`~runnerx.parallel.fsdp.FullyShardedModel`).

.. code-block:: python

    strategy = dict(
        type='FSDPStrategy',
        model_wrapper=dict(
            sharding_strategy='SHARD_GRAD_OP',          # -> sharding='zero2'
            auto_wrap_policy=dict(                      # -> wrap_modules=[the classes it picks]
                type='torch.distributed.fsdp.wrap.size_based_auto_wrap_policy',
                min_num_params=1e7),
            mixed_precision=dict(param_dtype='bfloat16', reduce_dtype='float32'),
            cpu_offload=False),
        state_dict_cfg='full',                          # -> state_dict_type='full'
        activation_checkpointing=dict(check_fn=...),    # -> the classes check_fn picks
    )

FSDP1 wraps the modules its ``auto_wrap_policy`` picks; runnerx shards the blocks of the
classes named in ``wrap_modules``. The policy is run over the model as FSDP1 runs it, and the
modules it picks become ``wrap_modules`` when they are exactly all modules of their classes;
otherwise the error says which module is left out and how to name the blocks instead. An
option without a faithful FSDP2 equivalent is an error naming ``strategy.<key>``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from .options import check_keys
from .wrap_policies import fsdp1_units, modules_as_classes, resolve_function

WRAPPER = "strategy.model_wrapper"
FSDP_INSTEAD = "runnerx's strategy=dict(type='FSDP', wrap_modules=[...])"
#: FSDP1's ``sharding_strategy`` names and the runnerx options that do the same
SHARDING_STRATEGIES = {
    "FULL_SHARD": {"sharding": "zero3"},
    "SHARD_GRAD_OP": {"sharding": "zero2"},
    "HYBRID_SHARD": {"sharding": "hsdp"},
    "_HYBRID_SHARD_ZERO2": {"sharding": "hsdp", "reshard_after_forward": False},
}
_EVERY_PARAMETER = "runnerx's FSDP shards every parameter of the model"
#: FSDP1 arguments runnerx refuses, and what to do instead
REFUSED_WRAPPER_KEYS = {
    "process_group": "runnerx shards over all processes, or within each node with "
    "sharding_strategy='HYBRID_SHARD' (runnerx: sharding='hsdp', shard_size=...)",
    "device_mesh": "runnerx builds the device mesh from sharding_strategy (FULL_SHARD, "
    "SHARD_GRAD_OP: all processes; HYBRID_SHARD: shard within a node)",
    "param_init_fn": "runnerx builds the model with its weights; to start from other weights "
    "use load_from",
    "device_id": "runnerx places the model on cuda:LOCAL_RANK itself",
    **dict.fromkeys(("ignored_modules", "ignored_parameters", "ignored_states"), _EVERY_PARAMETER),
}
WRAPPER_KEYS = (
    "type",
    "sharding_strategy",
    "auto_wrap_policy",
    "mixed_precision",
    "cpu_offload",
    "backward_prefetch",
    "forward_prefetch",
    "limit_all_gathers",
    "use_orig_params",
    "sync_module_states",
    *REFUSED_WRAPPER_KEYS,
)
WRAPPER_TYPES = ("MMFullyShardedDataParallel", "FullyShardedDataParallel")
MIXED_PRECISION_KEYS = (
    "param_dtype",
    "reduce_dtype",
    "buffer_dtype",
    "keep_low_precision_grads",
    "cast_forward_inputs",
    "cast_root_forward_inputs",
)
STATE_DICT_TYPES = {
    "full": "full",
    "local": "sharded",
    "FULL_STATE_DICT": "full",
    "LOCAL_STATE_DICT": "sharded",
    "SHARDED_STATE_DICT": "sharded",
}


def fsdp_options(
    model: nn.Module,
    model_wrapper: Mapping | None = None,
    state_dict_cfg: str | Mapping = "local",
    skip_init_weights: bool = False,
    *,
    wrapper_key: str = WRAPPER,
) -> dict[str, Any]:
    """The options of runnerx's ``dict(type='FSDP', ...)`` that do what FSDPStrategy's
    arguments do for ``model`` (MMEngine's defaults: FULL_SHARD, the root as the only unit,
    ``state_dict_cfg='local'``, i.e. every rank saves its shards: runnerx's ``'sharded'``).
    ``wrapper_key`` is the config key errors name for ``model_wrapper``."""
    if not isinstance(skip_init_weights, bool):
        raise TypeError(f"strategy.skip_init_weights must be a bool, got {skip_init_weights!r}")
    if skip_init_weights:
        warnings.warn(
            "strategy.skip_init_weights: runnerx skips the model's init_weights() whenever "
            "load_from or resume is set (the checkpoint gives the weights) and initialises "
            "them otherwise; the option itself changes nothing",
            stacklevel=3,
        )
    options = {"state_dict_type": _state_dict_type(state_dict_cfg)}
    wrapper = _as_mapping(model_wrapper, wrapper_key)
    check_keys(wrapper, WRAPPER_KEYS, wrapper_key)
    for key, hint in REFUSED_WRAPPER_KEYS.items():
        if wrapper.get(key) is not None:
            raise ValueError(f"{wrapper_key}.{key} has no equivalent in runnerx's FSDP2: {hint}")
    kind = wrapper.get("type", WRAPPER_TYPES[0])
    if kind not in WRAPPER_TYPES:
        raise ValueError(
            f"{wrapper_key}.type={kind!r}: runnerx shards with its own FSDP2 wrapper only "
            f"(FullyShardedModel); leave type out or set one of {', '.join(WRAPPER_TYPES)}"
        )
    options.update(_sharding(wrapper.get("sharding_strategy"), wrapper_key))
    _check_accepted_values(wrapper, wrapper_key)
    policy = wrapper.get("auto_wrap_policy")
    if policy is not None:
        units = fsdp1_units(model, resolve_function(policy, f"{wrapper_key}.auto_wrap_policy"))
        _check_not_nested(units, wrapper_key)
        if units:
            options["wrap_modules"] = modules_as_classes(
                model, units, f"{wrapper_key}.auto_wrap_policy", FSDP_INSTEAD
            )
            if wrapper.get("forward_prefetch"):
                options["prefetch"] = 1  # gather the next block while this one computes
    if wrapper.get("mixed_precision") is not None:
        options["mixed_precision"] = _mixed_precision(wrapper["mixed_precision"], wrapper_key)
    if wrapper.get("cpu_offload") is not None:
        options["cpu_offload"] = _cpu_offload(wrapper["cpu_offload"], wrapper_key)
    return options


def checkpointing_options(model: nn.Module, cfg: Mapping | None) -> dict | None:
    """runnerx's ``activation_checkpointing`` for FSDPStrategy's ``activation_checkpointing=
    dict(check_fn=...)``: the classes of the modules ``check_fn`` picks.

    ``check_fn`` is a FUNCTIONS name, a dotted path, ``dict(type=..., **arguments)`` or a
    callable; a dict's arguments go to the function (MMEngine passes it the other keys of
    ``activation_checkpointing`` instead and drops the dict's own: a bug)."""
    if cfg is None:
        return None
    where = "strategy.activation_checkpointing"
    cfg = _as_mapping(cfg, where)
    check_keys(cfg, ("check_fn",), where)
    if "check_fn" not in cfg:
        raise KeyError(f"{where} needs check_fn: a function telling which modules to checkpoint")
    check_fn = resolve_function(cfg["check_fn"], f"{where}.check_fn")
    picked = [module for module in model.modules() if module is not model and check_fn(module)]
    if not picked:
        warnings.warn(f"{where}.check_fn picks no module: nothing is checkpointed", stacklevel=3)
        return None
    instead = "the top-level activation_checkpointing=dict(modules=[...])"
    return {"modules": modules_as_classes(model, picked, f"{where}.check_fn", instead)}


def _sharding(strategy: Any, wrapper_key: str) -> dict[str, Any]:
    name = getattr(strategy, "name", strategy) or "FULL_SHARD"  # an enum member or its name
    if name == "NO_SHARD":
        raise ValueError(
            f"{wrapper_key}.sharding_strategy='NO_SHARD' replicates the model as DDP does: use "
            "strategy=dict(type='DDPStrategy') (runnerx's DDP) instead"
        )
    if name not in SHARDING_STRATEGIES:
        raise ValueError(
            f"{wrapper_key}.sharding_strategy={strategy!r} is not valid; expected one of "
            f"{', '.join(SHARDING_STRATEGIES)}"
        )
    return dict(SHARDING_STRATEGIES[name])


def _check_accepted_values(wrapper: Mapping[str, Any], wrapper_key: str) -> None:
    """Options FSDP2 has no switch for: the values it behaves as pass, the others fail."""
    if wrapper.get("use_orig_params", True) is not True:
        raise ValueError(
            f"{wrapper_key}.use_orig_params=False: FSDP2 keeps every parameter as its own sharded "
            "tensor (as use_orig_params=True does); remove it"
        )
    prefetch = getattr(wrapper.get("backward_prefetch"), "name", wrapper.get("backward_prefetch"))
    if prefetch not in (None, "BACKWARD_PRE", "BACKWARD_POST"):
        raise ValueError(
            f"{wrapper_key}.backward_prefetch={prefetch!r} is not valid; expected None, "
            "'BACKWARD_PRE' or 'BACKWARD_POST'"
        )
    if prefetch == "BACKWARD_POST":
        warnings.warn(
            f"{wrapper_key}.backward_prefetch='BACKWARD_POST': FSDP2 gathers the next block's "
            "parameters before the current block's gradient computation (BACKWARD_PRE)",
            stacklevel=4,
        )
    if wrapper.get("limit_all_gathers", True) is not True:
        warnings.warn(
            f"{wrapper_key}.limit_all_gathers=False: FSDP2 has no all-gather rate limiter to turn "
            "off (it frees gathered parameters through stream order); the option is not used",
            stacklevel=4,
        )
    # sync_module_states: runnerx's ranks build the model from one shared seed, so they start
    # from the same weights whatever its value


def _check_not_nested(units: list[nn.Module], wrapper_key: str) -> None:
    inner = {id(sub) for unit in units for sub in unit.modules() if sub is not unit}
    nested = [unit for unit in units if id(unit) in inner]
    if nested:
        raise ValueError(
            f"{wrapper_key}.auto_wrap_policy wraps {type(nested[0]).__name__} inside another "
            "wrapped module; runnerx shards blocks that do not contain each other: raise the "
            f"policy's threshold or name the blocks in {FSDP_INSTEAD}"
        )


def _mixed_precision(cfg: Any, wrapper_key: str) -> dict[str, Any]:
    where = f"{wrapper_key}.mixed_precision"
    cfg = _as_mapping(cfg, where)
    check_keys(cfg, MIXED_PRECISION_KEYS, where)
    if cfg.get("buffer_dtype") is not None:
        raise ValueError(
            f"{where}.buffer_dtype: FSDP2 leaves buffers in their own dtype; remove it (and "
            "cast the buffers in the model if they must be in another dtype)"
        )
    if cfg.get("keep_low_precision_grads"):
        raise ValueError(
            f"{where}.keep_low_precision_grads: FSDP2 gives the sharded parameters gradients "
            "in their own dtype; remove it"
        )
    policy = {
        key: _dtype(cfg[key], f"{where}.{key}")
        for key in ("param_dtype", "reduce_dtype")
        if cfg.get(key) is not None
    }
    # FSDP1 casts the root's inputs (cast_root_forward_inputs=True); FSDP2 casts each unit's
    policy["cast_forward_inputs"] = bool(
        cfg.get("cast_forward_inputs", False) or cfg.get("cast_root_forward_inputs", True)
    )
    return policy


def _dtype(value: Any, where: str) -> torch.dtype:
    dtype = getattr(torch, value, None) if isinstance(value, str) else value
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"{where}={value!r} is not a dtype; expected e.g. 'bfloat16'")
    return dtype


def _cpu_offload(value: Any, wrapper_key: str) -> bool:
    offload = getattr(value, "offload_params", value)  # torch's CPUOffload(offload_params=...)
    if not isinstance(offload, bool):
        raise TypeError(f"{wrapper_key}.cpu_offload must be a bool, got {value!r}")
    return offload


def _state_dict_type(cfg: Any) -> str:
    where = "strategy.state_dict_cfg"
    kind = cfg
    if isinstance(cfg, Mapping):
        check_keys(cfg, ("state_dict_type", "state_dict_config", "optim_state_dict_config"), where)
        kind = getattr(cfg.get("state_dict_type"), "name", cfg.get("state_dict_type"))
        if cfg.get("state_dict_config") or cfg.get("optim_state_dict_config"):
            warnings.warn(
                f"{where}: runnerx gathers full state dicts to rank 0 on the CPU and saves "
                "sharded ones with torch.distributed.checkpoint; state_dict_config and "
                "optim_state_dict_config are not used",
                stacklevel=4,
            )
    if kind not in STATE_DICT_TYPES:
        raise ValueError(
            f"{where}={cfg!r} is not valid; expected 'full', 'local' or "
            "dict(state_dict_type='FULL_STATE_DICT' | 'LOCAL_STATE_DICT' | 'SHARDED_STATE_DICT')"
        )
    return STATE_DICT_TYPES[kind]


def _as_mapping(value: Any, where: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a dict, but got {value!r}")
    return dict(value)
