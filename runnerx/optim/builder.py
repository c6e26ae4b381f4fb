"""build_optim_wrapper: the ``optim_wrapper`` config (one optimizer or several) -> wrapper."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.optim.constructor import config_path
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.optim_wrapper_dict import OptimWrapperDict
from runnerx.parallel.unwrap import unwrap
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import ValueAssertionError


def build_optim_wrapper(model: nn.Module, cfg: Any) -> OptimWrapper:
    """Build the optim wrapper that ``cfg`` (the ``optim_wrapper`` config) describes.

    One optimizer: ``constructor`` (default ``'DefaultOptimWrapperConstructor'``) is built
    with the rest of the config and ``paramwise_cfg``, then called with the model::

        build_optim_wrapper(model, dict(optimizer=dict(type='SGD', lr=0.1)))

    Several optimizers (no ``optimizer`` and no ``constructor`` key): one config, or one
    built OptimWrapper, per sub-module of the model, named as the model's attribute; the
    result is an :class:`OptimWrapperDict`::

        dict(generator=dict(optimizer=dict(type='Adam', lr=2e-4)),
             discriminator=dict(optimizer=dict(type='Adam', lr=1e-4)))

    A custom ``constructor`` gets the whole config and decides alone. A built OptimWrapper
    is returned as it is, with a warning when its optimizer holds none of ``model``'s
    parameters (it would train nothing).
    """
    if isinstance(cfg, OptimWrapper):
        warn_of_other_parameters(model, cfg)
        return cfg
    if not isinstance(cfg, Mapping):
        raise TypeError(
            f"optim_wrapper must be a config dict or an OptimWrapper, but got {type(cfg).__name__}"
        )
    where = config_path(cfg, "optim_wrapper")
    cfg = dict(cfg)  # shallow, so nested configs still know their place for error messages
    if isinstance(cfg.get("optimizer"), torch.optim.Optimizer):
        wrapper = OPTIM_WRAPPERS.build({"type": "OptimWrapper", **cfg})
        warn_of_other_parameters(model, wrapper)
        return wrapper
    if "optimizer" in cfg or "constructor" in cfg:
        constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(
            {
                "type": cfg.pop("constructor", "DefaultOptimWrapperConstructor"),
                "optim_wrapper_cfg": cfg,
                "paramwise_cfg": cfg.pop("paramwise_cfg", None),
            }
        )
        return constructor(model)
    return _build_several(model, cfg, where)


def _build_several(model: nn.Module, cfg: dict, where: str) -> OptimWrapperDict:
    if (
        not cfg
        or "type" in cfg
        or not all(isinstance(value, (Mapping, OptimWrapper)) for value in cfg.values())
    ):
        raise ValueAssertionError(
            f"{where} has no 'optimizer' key (its keys: {', '.join(map(str, cfg)) or 'none'}). "
            "Give one, e.g. optimizer=dict(type='SGD', lr=0.01), or, for several optimizers, "
            "one config per sub-module: dict(generator=dict(optimizer=...), "
            "discriminator=dict(optimizer=...))"
        )
    model = unwrap(model)
    children = dict(model.named_children())
    wrappers = {}
    for name, sub_cfg in cfg.items():
        if isinstance(sub_cfg, OptimWrapper):
            wrappers[name] = sub_cfg
        elif name not in children:
            hint = did_you_mean(name, list(children), form=SENTENCE)
            raise ValueError(
                f"{where}.{name} configures the optimizer of the sub-module {name!r}, but "
                f"{type(model).__name__} has none by that name (it has: "
                f"{', '.join(children) or 'no sub-modules'}).{hint}"
            )
        else:
            wrappers[name] = build_optim_wrapper(children[name], sub_cfg)
    return OptimWrapperDict(**wrappers)


def warn_of_other_parameters(model: nn.Module, optim_wrapper: OptimWrapper) -> None:
    """Warn when an optimizer built outside (of ``optim_wrapper``, or of each wrapper of an
    OptimWrapperDict) holds none of ``model``'s parameters: built on another model, or on
    parameters the model's wrapping replaced, it changes nothing the training uses."""
    owned = {id(parameter) for parameter in model.parameters()}
    several = isinstance(optim_wrapper, OptimWrapperDict)
    named = optim_wrapper.optim_wrappers if several else {None: optim_wrapper}
    for name, wrapper in named.items():
        held = [param for group in wrapper.optimizer.param_groups for param in group["params"]]
        if held and not any(id(param) in owned for param in held):
            where = "optim_wrapper" if name is None else f"optim_wrapper[{name!r}]"
            warnings.warn(
                f"{where}: its optimizer holds none of the parameters of the model "
                f"({type(unwrap(model)).__name__}), so training would change nothing; build it "
                "on the model the Runner trains (e.g. SGD(model.parameters(), lr=0.01)) or "
                "give a config, dict(optimizer=dict(type='SGD', lr=0.01))",
                stacklevel=2,
            )
