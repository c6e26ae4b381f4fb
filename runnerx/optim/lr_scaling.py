"""``auto_scale_lr`` as the Runner applies it: the linear scaling rule on every optimizer of
the ``optim_wrapper`` argument, once.

An optimizer config has its ``lr`` scaled before building (:func:`~runnerx.optim.scale_lr`);
an optimizer given built (an OptimWrapper, an OptimWrapperDict, a dict of built wrappers, or
``dict(optimizer=<torch optimizer>)``) has the ``lr`` of each param group scaled after it, as
MMEngine's Runner scales every optimizer. Each optimizer is scaled once, however often
``train()`` and ``resume()`` build again.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from runnerx.optim.config_changes import scale_lr
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.optim_wrapper_dict import OptimWrapperDict

#: the optimizers auto_scale_lr has scaled (from a config or built): never scaled again
_SCALED: weakref.WeakSet = weakref.WeakSet()


def build_with_scaled_lr(
    build: Callable[[Any], OptimWrapper],
    optim_wrapper: Any,
    auto_scale_lr: Any,
    real_batch_size: int | None,
    param_schedulers: Any = None,
    logger: logging.Logger | None = None,
) -> OptimWrapper:
    """``build(optim_wrapper)``; with ``auto_scale_lr.enable``, the lr of each optimizer not
    scaled yet multiplied by ``real_batch_size / auto_scale_lr['base_batch_size']``, and each
    change logged::

        build_with_scaled_lr(runner.build_optim_wrapper, OptimWrapper(SGD(params, lr=0.1)),
                             dict(enable=True, base_batch_size=8), 2)  # lr 0.025

    ``auto_scale_lr`` is checked (its keys, ``base_batch_size``) whether enabled or not.
    ``param_schedulers`` (the Runner's) may not hold a scheduler built on an optimizer that
    is scaled here (a RuntimeError, as in MMEngine): it started from the unscaled lr.
    """
    logger = logger or logging.getLogger("runnerx")
    cfg = _scaled_config(optim_wrapper, auto_scale_lr, real_batch_size, logger)
    if not auto_scale_lr.get("enable", False):
        return build(cfg)
    given: dict[str, torch.optim.Optimizer] = {}
    for where, optimizer in _given_optimizers(optim_wrapper, "optim_wrapper").items():
        if optimizer not in _SCALED and all(optimizer is not seen for seen in given.values()):
            given[where] = optimizer
    _refuse_built_schedulers(param_schedulers, given)
    built = build(cfg)
    ratio = real_batch_size / auto_scale_lr["base_batch_size"]
    for where, optimizer in given.items():
        before = [group["lr"] for group in optimizer.param_groups]
        for group in optimizer.param_groups:
            group["lr"] = group["lr"] * ratio
        logger.info(
            "auto_scale_lr: the learning rate was set for a batch size of %s and the real "
            "batch size is %s, so the lr of each param group of %s (an optimizer given "
            "built) is scaled by %g: %s -> %s",
            auto_scale_lr["base_batch_size"],
            real_batch_size,
            where,
            ratio,
            _lrs_text(before),
            _lrs_text(group["lr"] for group in optimizer.param_groups),
        )
    wrappers = built.optim_wrappers.values() if isinstance(built, OptimWrapperDict) else [built]
    _SCALED.update(wrapper.optimizer for wrapper in wrappers)
    return built


def _given_optimizers(cfg: Any, where: str) -> dict[str, torch.optim.Optimizer]:
    """The optimizers that the ``optim_wrapper`` argument ``cfg`` holds built, by place."""
    if isinstance(cfg, OptimWrapperDict):
        return {f"{where}.{name}": w.optimizer for name, w in cfg.optim_wrappers.items()}
    if isinstance(cfg, OptimWrapper):
        return {where: cfg.optimizer}
    if not isinstance(cfg, Mapping):
        return {}
    if _holds_built_optimizer(cfg):
        return {where: cfg["optimizer"]}
    if "optimizer" in cfg or "type" in cfg:
        return {}
    found: dict[str, torch.optim.Optimizer] = {}
    for name, sub_cfg in cfg.items():  # several optimizers: one wrapper or config each
        if isinstance(sub_cfg, OptimWrapper) or _holds_built_optimizer(sub_cfg):
            found.update(_given_optimizers(sub_cfg, f"{where}.{name}"))
    return found


def _holds_built_optimizer(cfg: Any) -> bool:
    return isinstance(cfg, Mapping) and isinstance(cfg.get("optimizer"), torch.optim.Optimizer)


def _scaled_config(
    cfg: Any, auto_scale_lr: Any, real_batch_size: int | None, logger: logging.Logger
) -> Any:
    """``cfg`` with the lr of its optimizer configs scaled (by ``scale_lr``, which checks
    ``auto_scale_lr`` too, and changes nothing unless it is enabled); its built parts as they
    are."""
    if not isinstance(cfg, Mapping) or _holds_built_optimizer(cfg):
        scale_lr({}, auto_scale_lr, real_batch_size, logger)  # an empty config: checks only
        return cfg
    built = [name for name, sub_cfg in cfg.items() if _holds_built_optimizer(sub_cfg)]
    if not built or "optimizer" in cfg or "type" in cfg:
        return scale_lr(cfg, auto_scale_lr, real_batch_size, logger)
    scaled = scale_lr(
        {name: sub_cfg for name, sub_cfg in cfg.items() if name not in built},
        auto_scale_lr,
        real_batch_size,
        logger,
    )
    new_cfg = cfg.copy()
    new_cfg.update(scaled)
    return new_cfg


def _refuse_built_schedulers(schedulers: Any, optimizers: Mapping[str, Any]) -> None:
    from runnerx.optim.scheduler.param_scheduler import _ParamScheduler

    for scheduler in _flatten(schedulers):
        if not isinstance(scheduler, _ParamScheduler):
            continue
        for where, optimizer in optimizers.items():
            if scheduler.optimizer is optimizer:
                raise RuntimeError(
                    f"auto_scale_lr scales the lr of {where} (an optimizer given built), but "
                    f"param_scheduler holds a {type(scheduler).__name__} already built on it, "
                    "which keeps the lr it started from (MMEngine refuses this too): give "
                    "param_scheduler as configs, which the Runner builds after scaling, or "
                    "scale the lr yourself and set auto_scale_lr.enable=False"
                )


def _flatten(schedulers: Any) -> Iterable[Any]:
    """Each entry of a ``param_scheduler`` value: a list, or a dict of lists by optimizer."""
    if isinstance(schedulers, (list, tuple)):
        for entry in schedulers:
            yield from _flatten(entry)
    elif isinstance(schedulers, Mapping) and "type" not in schedulers:
        for entry in schedulers.values():
            yield from _flatten(entry)
    elif schedulers is not None:
        yield schedulers


def _lrs_text(lrs: Iterable[Any]) -> str:
    values = [float(lr) for lr in lrs]
    if len(set(values)) == 1:
        return f"{values[0]:g}"
    return "[" + ", ".join(f"{value:g}" for value in values) + "]"
