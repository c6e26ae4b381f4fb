"""Changes to the ``optim_wrapper`` config made before building it: ``auto_scale_lr`` and ``--amp``.

Both return a changed copy (only the dicts on the changed path are copied) and leave the
config they were given as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Any

from runnerx.optim.amp_optim_wrapper import AmpOptimWrapper, resolve_amp_dtype
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import ValueAssertionError

_AUTO_SCALE_LR_KEYS = ("enable", "base_batch_size")


def _wrapper_cfgs(cfg: Mapping, where: str) -> Iterator[tuple[str | None, Mapping]]:
    """``(name, config)`` of each optimizer's wrapper config: ``(None, cfg)`` for a single
    optimizer, else one per sub-config of a several-optimizer config."""
    if not isinstance(cfg, Mapping):
        raise TypeError(f"{where} must be a config dict, but got {type(cfg).__name__}")
    if "optimizer" in cfg or "type" in cfg:
        yield None, cfg
        return
    for name, sub_cfg in cfg.items():
        if isinstance(sub_cfg, Mapping):
            yield name, sub_cfg


def _replaced(cfg: Mapping, name: str | None, sub_cfg: Mapping) -> Mapping:
    if name is None:
        return sub_cfg
    new = cfg.copy()
    new[name] = sub_cfg
    return new


def scale_lr(
    optim_wrapper_cfg: Mapping,
    auto_scale_lr_cfg: Mapping | None,
    real_batch_size: int,
    logger: logging.Logger | None = None,
) -> Mapping:
    """Apply the linear scaling rule: lr x ``real_batch_size`` / ``base_batch_size``.

    ``real_batch_size`` is the total batch size of one step (per-device batch size x world
    size, computed by the caller). With ``auto_scale_lr=dict(enable=True, base_batch_size=256)``
    and 8 GPUs of 64 samples each, ``optimizer.lr`` is doubled. Returns the changed copy of
    ``optim_wrapper_cfg``; the same config when ``auto_scale_lr`` is None or not enabled.
    """
    if auto_scale_lr_cfg is None:
        return optim_wrapper_cfg
    if not isinstance(auto_scale_lr_cfg, Mapping):
        raise TypeError(
            "auto_scale_lr must be a dict such as dict(enable=True, base_batch_size=256), but "
            f"got {auto_scale_lr_cfg!r}"
        )
    for key in auto_scale_lr_cfg:
        if key not in _AUTO_SCALE_LR_KEYS:
            hint = did_you_mean(key, _AUTO_SCALE_LR_KEYS, form=SENTENCE)
            raise ValueError(
                f"auto_scale_lr has an unknown key {key!r}; its keys are enable and "
                f"base_batch_size.{hint}"
            )
    if not auto_scale_lr_cfg.get("enable", False):
        return optim_wrapper_cfg
    base = auto_scale_lr_cfg.get("base_batch_size")
    if isinstance(base, bool) or not isinstance(base, (int, float)) or base <= 0:
        raise ValueAssertionError(
            "auto_scale_lr.base_batch_size must be set to the total batch size the config's "
            f"learning rate was tuned for (a positive number), but got {base!r}"
        )
    if isinstance(real_batch_size, bool) or not isinstance(real_batch_size, int):
        raise TypeError(f"real_batch_size must be an int, but got {real_batch_size!r}")
    if real_batch_size <= 0:
        raise ValueError(f"real_batch_size must be positive, but got {real_batch_size}")
    ratio = real_batch_size / base
    logger = logger or logging.getLogger("runnerx")
    new_cfg = optim_wrapper_cfg
    for name, wrapper_cfg in _wrapper_cfgs(optim_wrapper_cfg, "optim_wrapper"):
        where = "optim_wrapper" if name is None else f"optim_wrapper.{name}"
        optimizer_cfg = wrapper_cfg.get("optimizer")
        if not isinstance(optimizer_cfg, Mapping) or "lr" not in optimizer_cfg:
            raise ValueError(
                f"auto_scale_lr is enabled but {where}.optimizer has no 'lr' to scale; set "
                "the learning rate in the optimizer config"
            )
        new_optimizer = optimizer_cfg.copy()
        new_optimizer["lr"] = optimizer_cfg["lr"] * ratio
        new_wrapper = wrapper_cfg.copy()
        new_wrapper["optimizer"] = new_optimizer
        new_cfg = _replaced(new_cfg, name, new_wrapper)
        logger.info(
            "auto_scale_lr: the learning rate was set for a batch size of %s and the real "
            "batch size is %s, so %s.optimizer.lr is scaled by %g: %g -> %g",
            base,
            real_batch_size,
            where,
            ratio,
            optimizer_cfg["lr"],
            new_optimizer["lr"],
        )
    return new_cfg


def enable_amp(
    cfg_optim_wrapper: Mapping, dtype: Any = None, *, default_dtype: Any = None
) -> Mapping:
    """Switch the config to mixed precision, as ``tools/train.py --amp`` does.

    A type the registry resolves to OptimWrapper (``'OptimWrapper'``,
    ``'mmengine.OptimWrapper'``, the class, or no type) becomes AmpOptimWrapper (the class for
    a class, else the name ``'AmpOptimWrapper'``) with ``loss_scale='dynamic'``; one that
    resolves to AmpOptimWrapper or a subclass of it stays as it is; any other type is an
    error. ``dtype`` ('float16' / 'bfloat16'), when given, is set too; ``default_dtype`` is set
    only where the config sets no ``dtype`` (``-O2``: bfloat16 unless the config chose one).
    Returns the changed copy.
    """
    for value in (dtype, default_dtype):
        if value is not None:
            resolve_amp_dtype(value)
    new_cfg = cfg_optim_wrapper
    for name, wrapper_cfg in _wrapper_cfgs(cfg_optim_wrapper, "optim_wrapper"):
        where = "optim_wrapper" if name is None else f"optim_wrapper.{name}"
        wrapper_type = wrapper_cfg.get("type", "OptimWrapper")
        wrapper_class = _resolved(wrapper_type)
        new_wrapper = wrapper_cfg.copy()
        if wrapper_class is OptimWrapper:
            new_wrapper["type"] = (
                AmpOptimWrapper if isinstance(wrapper_type, type) else "AmpOptimWrapper"
            )
            new_wrapper["loss_scale"] = "dynamic"
        elif not (isinstance(wrapper_class, type) and issubclass(wrapper_class, AmpOptimWrapper)):
            raise ValueError(
                f"--amp switches {where}.type from 'OptimWrapper' to 'AmpOptimWrapper', but "
                f"the config has type={wrapper_type!r}; set the mixed-precision options of "
                "that wrapper in the config instead"
            )
        if dtype is not None:
            new_wrapper["dtype"] = dtype
        elif default_dtype is not None and new_wrapper.get("dtype") is None:
            new_wrapper["dtype"] = default_dtype
        new_cfg = _replaced(new_cfg, name, new_wrapper)
    return new_cfg


def _resolved(wrapper_type: Any) -> Any:
    """The class an optim wrapper ``type`` names, as the registry resolves it; None when it
    resolves to nothing (the error then shows the type as written)."""
    if not isinstance(wrapper_type, str):
        return wrapper_type
    from runnerx.registry import OPTIM_WRAPPERS

    return OPTIM_WRAPPERS.get(wrapper_type)
