"""Strategies: how a prepared model is wrapped for its run (the last step of prepare_model).

* ``strategy=None`` (default): DDP when distributed, else the model itself;
* ``'single'``: the model itself;
* ``'ddp'`` or ``dict(type='DDP', find_unused_parameters=..., static_graph=..., ...)``:
  :class:`DistributedDataParallelModel`;
* ``'fsdp'`` or ``dict(type='FSDP', sharding=..., ...)``: :class:`FullyShardedModel` (see
  :mod:`runnerx.parallel.fsdp`);
* ``'dp'``: :class:`DataParallelModel` over the visible GPUs;
* MMEngine's FlexibleRunner names (``'DDPStrategy'``, ``'FSDPStrategy'``, ...): see
  :mod:`runnerx.parallel.mmengine_strategies`.

Each is a function of the model registered in ``STRATEGIES``; a custom one is registered the
same way (``@STRATEGIES.register_module()`` on ``def my_strategy(module, **options)``).
MMEngine's ``model_wrapper_cfg`` (a ``MODEL_WRAPPERS`` type) is honoured in distributed runs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.dist import get_world_size, is_distributed
from runnerx.logging import print_log
from runnerx.optim.checks import check_arguments
from runnerx.registry import MODEL_WRAPPERS, STRATEGIES
from runnerx.suggest import did_you_mean

from .data_parallel import data_parallel
from .ddp import DistributedDataParallelModel, check_ddp_options
from .fsdp import FullyShardedModel, check_fsdp_values

#: the short names of ``strategy='...'`` (any case) and the registered types they stand for
STRATEGY_NAMES = {"single": "SingleDevice", "ddp": "DDP", "fsdp": "FSDP", "dp": "DP"}


@STRATEGIES.register_module(name="SingleDevice")
def single_device(module: nn.Module) -> nn.Module:
    """One process, one device: the model as it is."""
    return module


@STRATEGIES.register_module(name="DDP")
def distributed_data_parallel(
    module: nn.Module, *, _name: str = "DDP", **options: Any
) -> nn.Module:
    """:class:`DistributedDataParallelModel` with MMEngine's defaults (``broadcast_buffers=
    False``; ``device_ids`` the model's GPU); outside a distributed run, the model itself
    (with a warning naming the strategy ``_name``)."""
    check_ddp_options(options, "strategy")
    if get_world_size() == 1:
        _warn_single_process(_name)
        return module
    options.setdefault("broadcast_buffers", False)
    options.setdefault("device_ids", device_ids_of(module))
    return DistributedDataParallelModel(module, **options)


@STRATEGIES.register_module(name="FSDP")
def fully_sharded(module: nn.Module, *, _name: str = "FSDP", **options: Any) -> nn.Module:
    """:class:`FullyShardedModel`; outside a distributed run, the model itself (with a
    warning naming the strategy ``_name``), its options checked as far as one process can."""
    check_arguments(FullyShardedModel, list(options), "strategy", skip=1)
    if not is_distributed():
        check_fsdp_values(module, options)
        _warn_single_process(_name)
        return module
    return FullyShardedModel(module, **options)


STRATEGIES.register_module(name="DP", module=data_parallel)


def strategy_config(strategy: Any) -> dict:
    """``strategy`` as a dict (``'fsdp'`` -> ``{'type': 'FSDP'}``); None is ``{}``."""
    if strategy is None:
        return {}
    if isinstance(strategy, str):
        strategy = {"type": strategy}
    if not isinstance(strategy, Mapping):
        raise TypeError(
            "strategy must be a name ('ddp', 'fsdp', 'dp', 'single') or a dict such as "
            f"dict(type='FSDP', sharding='zero2'), but got {strategy!r}"
        )
    cfg = dict(strategy)
    kind = cfg.get("type")
    if isinstance(kind, str):
        cfg["type"] = STRATEGY_NAMES.get(kind.lower(), kind)
        if STRATEGIES.get(cfg["type"]) is None:
            known = [*STRATEGY_NAMES, *STRATEGIES.module_dict]
            raise ValueError(
                f"strategy type {kind!r} is not known (built in: {', '.join(known)})"
                f"{did_you_mean(kind, known)}"
            )
    return cfg


def wrap_model(
    model: nn.Module,
    strategy: Mapping[str, Any],
    model_wrapper_cfg: Mapping[str, Any] | None = None,
    find_unused_parameters: bool = False,
) -> nn.Module:
    """Wrap ``model`` as ``strategy`` (from :func:`strategy_config`) or MMEngine's
    ``model_wrapper_cfg`` says; with neither, DDP when distributed."""
    strategy = dict(strategy)
    if model_wrapper_cfg is not None:
        if strategy.get("type") is not None:
            raise ValueError(
                "the config sets both strategy and model_wrapper_cfg; keep one (strategy for "
                "runnerx's DDP/FSDP options, model_wrapper_cfg for MMEngine's wrappers)"
            )
        return build_model_wrapper(model, model_wrapper_cfg)
    kind = strategy.pop("type", None) or ("DDP" if get_world_size() > 1 else "SingleDevice")
    if kind == "DDP":
        strategy.setdefault("find_unused_parameters", find_unused_parameters)
    builder = STRATEGIES.get(kind) if isinstance(kind, str) else kind
    if builder is not None:  # (a builder taking **options checks them itself)
        check_arguments(builder, list(strategy), "strategy", skip=1)
    return STRATEGIES.build({"type": kind, **strategy}, default_args={"module": model})


def build_model_wrapper(model: nn.Module, cfg: Mapping[str, Any]) -> nn.Module:
    """MMEngine's way: ``MODEL_WRAPPERS.build(model_wrapper_cfg)`` in distributed runs only."""
    if not isinstance(cfg, Mapping):
        raise TypeError(
            "model_wrapper_cfg must be a dict such as dict(type='MMDistributedDataParallel', "
            f"find_unused_parameters=True), but got {type(cfg).__name__}: {cfg!r}"
        )
    if get_world_size() == 1:
        return model
    cfg = {"type": "MMDistributedDataParallel", **cfg}
    default_args: dict[str, Any] = {"module": model}
    wrapper = MODEL_WRAPPERS.get(cfg["type"]) if isinstance(cfg["type"], str) else cfg["type"]
    if isinstance(wrapper, type) and issubclass(wrapper, nn.parallel.DistributedDataParallel):
        default_args["device_ids"] = device_ids_of(model)
    return MODEL_WRAPPERS.build(cfg, default_args=default_args)


def device_ids_of(module: nn.Module) -> list[int] | None:
    """DDP's ``device_ids``: the model's GPU, or None on the CPU."""
    for param in module.parameters():
        return [param.device.index] if param.device.type == "cuda" else None
    return [torch.cuda.current_device()] if torch.cuda.is_available() else None


def _warn_single_process(kind: str) -> None:
    """Warn, in the run's log, that the strategy ``kind`` leaves a one-process run's model as
    it is."""
    print_log(
        f"strategy {kind!r} is set but this is not a distributed run (one process): the model "
        "runs as it is; start several processes with torchrun ... --launcher pytorch",
        logger="current",
        level=logging.WARNING,
    )
