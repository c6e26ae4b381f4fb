"""DefaultOptimWrapperConstructor: model + ``optim_wrapper`` config -> OptimWrapper."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from torch import nn

from runnerx.optim.checks import check_arguments
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.paramwise import check_paramwise_cfg, paramwise_groups
from runnerx.parallel.unwrap import unwrap
from runnerx.registry import (
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    NotRegisteredError,
    Registry,
)
from runnerx.registry.build import _registries_to_search


def config_path(cfg: Any, default: str) -> str:
    """Where ``cfg`` hangs in its config (``'optim_wrapper.optimizer'``), else ``default``."""
    from runnerx.config.config_dict import config_key_path

    return config_key_path(cfg) or default


def resolve_type(registry: Registry, cfg: Mapping[str, Any], where: str) -> Any:
    """The class ``cfg['type']`` names, searched as ``registry.build`` would search it."""
    type_value = cfg.get("type")
    if type_value is None:
        raise ValueError(f"{where} has no 'type' key (e.g. type='AdamW')")
    if not isinstance(type_value, str):
        return type_value
    registries = _registries_to_search(registry)
    for each in registries:
        found = each.get(type_value)
        if found is not None:
            return found
    raise NotRegisteredError(type_value, registries, where)


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class DefaultOptimWrapperConstructor:
    """Builds the optimizer over a model's trainable parameters, then the wrapper around it::

        optim_wrapper = dict(
            type='OptimWrapper',                       # default
            optimizer=dict(type='AdamW', lr=1e-3, weight_decay=0.05),
            paramwise_cfg=dict(norm_decay_mult=0.0, custom_keys={'backbone': dict(lr_mult=0.1)}),
        )
        constructor = DefaultOptimWrapperConstructor(optim_wrapper_cfg, paramwise_cfg)
        optim_wrapper = constructor(model)

    Without ``paramwise_cfg`` there is one param group of every parameter with
    ``requires_grad=True``; with it, the rules of :mod:`runnerx.optim.paramwise`.
    """

    def __init__(self, optim_wrapper_cfg: Mapping[str, Any], paramwise_cfg: dict | None = None):
        if not isinstance(optim_wrapper_cfg, Mapping):
            raise TypeError(
                f"optim_wrapper must be a dict, but got {type(optim_wrapper_cfg).__name__}"
            )
        if "optimizer" not in optim_wrapper_cfg:
            where = config_path(optim_wrapper_cfg, "optim_wrapper")
            raise ValueError(
                f"{where} has no 'optimizer' key; give one, e.g. "
                "optimizer=dict(type='SGD', lr=0.01, momentum=0.9)"
            )
        self.optim_wrapper_cfg = dict(optim_wrapper_cfg)
        self.optimizer_cfg = self.optim_wrapper_cfg.pop("optimizer")
        # named from the optimizer's config, which keeps its place in the config tree
        path = config_path(self.optimizer_cfg, "optim_wrapper.optimizer")
        self.where = path.rpartition(".")[0] or "optim_wrapper"
        if not isinstance(self.optimizer_cfg, Mapping):
            raise TypeError(
                f"{self.where}.optimizer must be a dict such as dict(type='SGD', lr=0.01), "
                f"but got {type(self.optimizer_cfg).__name__}"
            )
        self.paramwise_cfg = {} if paramwise_cfg is None else paramwise_cfg
        self.base_lr = self.optimizer_cfg.get("lr")
        self.base_wd = self.optimizer_cfg.get("weight_decay")
        check_paramwise_cfg(self.paramwise_cfg, self.base_lr, self.base_wd)

    def __call__(self, model: nn.Module) -> OptimWrapper:
        """Build the optim wrapper for ``model``'s parameters."""
        model = unwrap(model)
        where = f"{self.where}.optimizer"
        optimizer_type = resolve_type(OPTIMIZERS, self.optimizer_cfg, where)
        arguments = [key for key in self.optimizer_cfg if key != "type"]
        check_arguments(optimizer_type, arguments, where, skip=1)
        # the first parameter takes the parameters: 'params' for torch, other names elsewhere
        params_arg = next(iter(inspect.signature(optimizer_type).parameters))
        if self.paramwise_cfg:
            params = paramwise_groups(model, self.paramwise_cfg, self.base_lr, self.base_wd)
        else:
            params = [param for param in model.parameters() if param.requires_grad]
        optimizer = OPTIMIZERS.build(
            {**self.optimizer_cfg, "type": optimizer_type, params_arg: params}
        )
        wrapper_cfg = {"type": "OptimWrapper", **self.optim_wrapper_cfg}
        wrapper_type = resolve_type(OPTIM_WRAPPERS, wrapper_cfg, self.where)
        check_arguments(wrapper_type, [key for key in wrapper_cfg if key != "type"], self.where)
        return OPTIM_WRAPPERS.build({**wrapper_cfg, "type": wrapper_type, "optimizer": optimizer})
