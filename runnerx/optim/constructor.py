"""DefaultOptimWrapperConstructor: model + ``optim_wrapper`` config -> OptimWrapper."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping
from numbers import Real
from typing import Any

import torch
from torch import nn

from runnerx.config.config_dict import keyed_copy
from runnerx.optim.checks import check_arguments
from runnerx.optim.optim_wrapper import OptimWrapper
from runnerx.optim.paramwise import (
    ParamwiseRules,
    check_paramwise_cfg,
    log_options,
    paramwise_groups,
)
from runnerx.parallel.unwrap import unwrap
from runnerx.registry import (
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    NotRegisteredError,
    Registry,
)
from runnerx.registry.build import lookup_type
from runnerx.registry.errors import mark_wrapped
from runnerx.utils.errors import ValueAssertionError
from runnerx.utils.misc import is_method_overridden


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
    found, registries = lookup_type(registry, type_value)
    if found is None:
        raise NotRegisteredError(type_value, registries, where)
    return found


def _check_numbers(optimizer_cfg: Mapping[str, Any], where: str) -> None:
    """Refuse an ``lr``, ``weight_decay`` or ``momentum`` that is not a number (torch's own
    error, ``'<' not supported between instances of 'str' and 'float'``, names none)."""
    for key in ("lr", "weight_decay", "momentum"):
        value = optimizer_cfg.get(key)
        if value is None or _is_number(value):
            continue
        hint = ""
        if isinstance(value, str):
            try:
                float(value)
                hint = f" (write {value.strip()} without quotes)"
            except ValueError:
                pass
        raise mark_wrapped(  # it names its key: no "while building" around it
            TypeError(f"{where}.{key} must be a number, got {type(value).__name__} {value!r}{hint}")
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, (Real, torch.Tensor)) and not isinstance(value, bool)


def _check_each_parameter_once(param_groups: list[dict], model: nn.Module) -> None:
    """Name a parameter that ``param_groups`` hold twice (torch's error names none)."""
    seen: set[int] = set()
    for group in param_groups:
        for param in group["params"]:
            if id(param) in seen:
                names = [n for n, p in model.named_parameters(remove_duplicate=False) if p is param]
                raise ValueError(
                    f"the parameter {' = '.join(names) or '(not in the model)'} is in two param "
                    "groups of the optimizer; for shared weights set "
                    "optim_wrapper.paramwise_cfg.bypass_duplicate=True to optimize it once"
                )
            seen.add(id(param))


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
    ``requires_grad=True``; with it, the rules of :mod:`runnerx.optim.paramwise`, and
    parameters with equal settings share a param group.

    Custom constructors subclass it as in MMEngine (layer-wise lr decay is written so): they
    read their own keys from ``self.paramwise_cfg`` (only this class refuses keys it does not
    know) and override :meth:`add_params`, which ``__call__`` then calls as
    ``self.add_params(params, model)`` whenever ``paramwise_cfg`` is set::

        @OPTIM_WRAPPER_CONSTRUCTORS.register_module()
        class LayerDecayConstructor(DefaultOptimWrapperConstructor):
            def add_params(self, params, module, prefix='', is_dcn_module=None):
                rate = self.paramwise_cfg['decay_rate']
                for name, param in module.named_parameters():
                    depth = name.count('.')
                    params.append({'params': [param], 'lr': self.base_lr * rate**depth})

    ``optimizer_cfg``, ``paramwise_cfg``, ``base_lr``, ``base_wd`` and ``optim_wrapper_cfg``
    (without ``optimizer``) are MMEngine's attributes; ``_validate_cfg`` and ``_is_in`` its
    helpers.
    """

    def __init__(self, optim_wrapper_cfg: Mapping[str, Any], paramwise_cfg: dict | None = None):
        if not isinstance(optim_wrapper_cfg, Mapping):
            raise TypeError(
                f"optim_wrapper must be a dict, but got {type(optim_wrapper_cfg).__name__}"
            )
        if "optimizer" not in optim_wrapper_cfg:
            where = config_path(optim_wrapper_cfg, "optim_wrapper")
            raise ValueAssertionError(
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
        _check_numbers(self.optimizer_cfg, f"{self.where}.optimizer")
        self.base_lr = self.optimizer_cfg.get("lr")
        self.base_wd = self.optimizer_cfg.get("weight_decay")
        self._validate_cfg()

    def _validate_cfg(self) -> None:
        """Check ``paramwise_cfg`` against the optimizer config (see
        :func:`~runnerx.optim.paramwise.check_paramwise_cfg`); a key this class does not know
        is an error here, and left to the subclass in a subclass."""
        strict = type(self) is DefaultOptimWrapperConstructor
        check_paramwise_cfg(self.paramwise_cfg, self.base_lr, self.base_wd, strict=strict)

    def _is_in(self, param_group: Mapping[str, Any], param_group_list: list[dict]) -> bool:
        """Whether a parameter of ``param_group`` is already in one of ``param_group_list``."""
        added = {id(param) for group in param_group_list for param in group["params"]}
        return any(id(param) in added for param in param_group["params"])

    def add_params(
        self,
        params: list[dict],
        module: nn.Module,
        prefix: str = "",
        is_dcn_module: bool | float | None = None,
    ) -> None:
        """Append one param group per trainable parameter of ``module`` (named ``prefix`` in
        the model) to ``params``, in ``named_parameters`` order, with the options the
        ``paramwise_cfg`` rules give it: MMEngine's extension point for subclasses.

        The module's own parameters come first, then each child's through
        ``self.add_params``, so an override sees every sub-module. ``is_dcn_module`` is
        MMEngine's flag for mmcv's deformable convolutions, which runnerx has not: unused.
        """
        rules = ParamwiseRules(self.paramwise_cfg, self.base_lr, self.base_wd)
        bypass_duplicate = self.paramwise_cfg.get("bypass_duplicate", False)
        for name, param in module.named_parameters(recurse=False):
            full_name = f"{prefix}.{name}" if prefix else name
            group = {"params": [param]}
            if bypass_duplicate and self._is_in(group, params):
                warnings.warn(
                    f"{full_name!r} is skipped: it is a parameter added already "
                    "(paramwise_cfg.bypass_duplicate=True)",
                    stacklevel=2,
                )
                continue
            if param.requires_grad:
                options = rules.options(module, name, param, full_name)
                log_options(full_name, options)
                params.append({**group, **options})
        for child_name, child in module.named_children():
            child_prefix = f"{prefix}.{child_name}" if prefix else child_name
            self.add_params(params, child, prefix=child_prefix, is_dcn_module=False)

    def __call__(self, model: nn.Module) -> OptimWrapper:
        """Build the optim wrapper for ``model``'s parameters."""
        model = unwrap(model)
        where = f"{self.where}.optimizer"
        optimizer_type = resolve_type(OPTIMIZERS, self.optimizer_cfg, where)
        arguments = [key for key in self.optimizer_cfg if key != "type"]
        check_arguments(optimizer_type, arguments, where, skip=1)
        # the first parameter takes the parameters: 'params' for torch, other names elsewhere
        params_arg = next(iter(inspect.signature(optimizer_type).parameters))
        if not self.paramwise_cfg:  # as in MMEngine: every parameter, frozen ones too (torch
            # skips those without a gradient, and one unfrozen later is trained from then on)
            params = list(model.parameters())
        elif is_method_overridden("add_params", DefaultOptimWrapperConstructor, self):
            params = []
            self.add_params(params, model)
            _check_each_parameter_once(params, model)
        else:  # the same settings as add_params gives, in shared groups: faster steps
            params = paramwise_groups(model, self.paramwise_cfg, self.base_lr, self.base_wd)
        # keyed, so that the optimizer's own errors (torch's "Invalid learning rate") name it
        optimizer = OPTIMIZERS.build(
            keyed_copy({**self.optimizer_cfg, "type": optimizer_type}, where),
            default_args={params_arg: params},
        )
        wrapper_cfg = {"type": "OptimWrapper", **self.optim_wrapper_cfg}
        wrapper_type = resolve_type(OPTIM_WRAPPERS, wrapper_cfg, self.where)
        check_arguments(wrapper_type, [key for key in wrapper_cfg if key != "type"], self.where)
        return OPTIM_WRAPPERS.build({**wrapper_cfg, "type": wrapper_type, "optimizer": optimizer})
