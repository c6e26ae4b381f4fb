"""``paramwise_cfg``: per-parameter learning rate and weight decay rules (MMEngine's rules).

::

    paramwise_cfg = dict(
        custom_keys={'backbone': dict(lr_mult=0.1), 'head.fc': dict(decay_mult=0.0)},
        bias_lr_mult=2.0, bias_decay_mult=0.0, norm_decay_mult=0.0,
        dwconv_decay_mult=0.0, flat_decay_mult=0.0, bypass_duplicate=False)

A parameter whose name contains a ``custom_keys`` key takes that key's settings (the longest
matching key wins, ties alphabetically) and no other rule. Otherwise a bias (not of a norm
layer) takes ``bias_lr_mult``, and the weight decay multiplier is the first that applies of:
norm layer, bias, depthwise conv, any other 1-D parameter. Parameters with
``requires_grad=False`` are left out; parameters with the same settings share a param group.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from typing import Any

from torch import nn

from runnerx.logging.logger import print_log
from runnerx.registry.errors import mark_wrapped
from runnerx.suggest import SENTENCE, did_you_mean

# MMEngine's norm layers, plus RMSNorm (torch >= 2.4)
_NORM_TYPES = (
    nn.modules.batchnorm._BatchNorm,
    nn.modules.instancenorm._InstanceNorm,
    nn.GroupNorm,
    nn.LayerNorm,
    *((nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()),
)
_DECAY_MULTS = ("norm_decay_mult", "bias_decay_mult", "dwconv_decay_mult", "flat_decay_mult")
PARAMWISE_KEYS = ("custom_keys", "bias_lr_mult", *_DECAY_MULTS, "bypass_duplicate")
# accepted, as MMEngine accepts them, with a warning that they change nothing: MMEngine's
# constructor reads none of them (dcn_offset_lr_mult scales mmcv's deformable-conv offsets,
# which runnerx lacks; lr_mult and decay_mult are read only inside custom_keys)
_IGNORED_KEYS = {
    "dcn_offset_lr_mult": "it applies to mmcv's deformable convolutions",
    "lr_mult": "MMEngine ignores it too; lr_mult works inside custom_keys "
    "(custom_keys={'backbone': dict(lr_mult=0.1)}), and optimizer.lr sets every lr",
    "decay_mult": "MMEngine ignores it too; decay_mult works inside custom_keys "
    "(custom_keys={'backbone': dict(decay_mult=0.0)}), and optimizer.weight_decay sets "
    "every weight decay",
}

logger = logging.getLogger(__name__)


def check_paramwise_cfg(
    paramwise_cfg: Any, base_lr: Any, base_wd: Any, strict: bool = True
) -> None:
    """Raise a clear error for a ``paramwise_cfg`` the rules cannot apply. Each names its
    key, so the constructor's build puts no ``while building ...`` in front of it.

    ``strict=False`` (a custom constructor's config) lets keys these rules do not know pass
    without a word: they belong to the constructor that reads them.
    """
    where = "optim_wrapper.paramwise_cfg"
    if not isinstance(paramwise_cfg, Mapping):
        raise mark_wrapped(
            TypeError(f"{where} must be a dict, but got {type(paramwise_cfg).__name__}")
        )
    for key in paramwise_cfg if strict else ():
        if key not in PARAMWISE_KEYS and key not in _IGNORED_KEYS:
            hint = did_you_mean(key, PARAMWISE_KEYS, form=SENTENCE)
            raise mark_wrapped(
                ValueError(
                    f"{where} has an unknown key {key!r}; the keys are "
                    f"{', '.join(PARAMWISE_KEYS)}.{hint}"
                )
            )
    needs_wd = [key for key in _DECAY_MULTS if paramwise_cfg.get(key) is not None]
    needs_lr = ["bias_lr_mult"] if paramwise_cfg.get("bias_lr_mult") is not None else []
    custom_keys = paramwise_cfg.get("custom_keys", {})
    if not isinstance(custom_keys, Mapping):
        raise mark_wrapped(
            TypeError(f"{where}.custom_keys must be a dict of dicts, got {custom_keys!r}")
        )
    for key, settings in custom_keys.items():
        if not isinstance(settings, Mapping):
            raise mark_wrapped(
                TypeError(
                    f"{where}.custom_keys[{key!r}] must be a dict such as dict(lr_mult=0.1, "
                    f"decay_mult=0.0), but got {settings!r}"
                )
            )
        needs_wd += [f"custom_keys[{key!r}].decay_mult"] if "decay_mult" in settings else []
        needs_lr += [f"custom_keys[{key!r}].lr_mult"] if "lr_mult" in settings else []
    for needs, base, option in ((needs_wd, base_wd, "weight_decay"), (needs_lr, base_lr, "lr")):
        if needs and base is None:
            raise mark_wrapped(
                ValueError(
                    f"{where}.{needs[0]} multiplies optim_wrapper.optimizer.{option}, which is "
                    f"not set; give the optimizer config a {option}"
                )
            )
    for key, why in _IGNORED_KEYS.items() if strict else ():
        if key in paramwise_cfg:
            warnings.warn(f"{where}.{key} is ignored: {why}", stacklevel=4)


def paramwise_groups(
    model: nn.Module, paramwise_cfg: Mapping[str, Any], base_lr: Any, base_wd: Any
) -> list[dict]:
    """The param groups of ``model``'s trainable parameters under ``paramwise_cfg``'s rules."""
    rules = ParamwiseRules(paramwise_cfg, base_lr, base_wd)
    custom_keys = rules.custom_keys
    bypass_duplicate = paramwise_cfg.get("bypass_duplicate", False)
    groups: list[tuple[dict, list, list]] = []  # (options, params, names)
    seen: dict[int, str] = {}
    matched: set[str] = set()
    for module_name, module in model.named_modules(remove_duplicate=False):
        for name, param in module.named_parameters(recurse=False):
            full_name = f"{module_name}.{name}" if module_name else name
            matched.update(key for key in custom_keys if key in full_name)
            if id(param) in seen:
                if not bypass_duplicate:
                    raise ValueError(
                        f"parameter {full_name!r} is the same tensor as {seen[id(param)]!r} "
                        "(shared weights); set optim_wrapper.paramwise_cfg.bypass_duplicate="
                        "True to optimize it once"
                    )
                warnings.warn(
                    f"{full_name!r} is skipped: it is the same parameter as "
                    f"{seen[id(param)]!r} (paramwise_cfg.bypass_duplicate=True)",
                    stacklevel=3,
                )
                continue
            seen[id(param)] = full_name
            if not param.requires_grad:
                continue
            options = rules.options(module, name, param, full_name)
            log_options(full_name, options)
            _add_to_group(groups, options, param, full_name)
    unmatched = [key for key in custom_keys if key not in matched]
    if unmatched:
        warnings.warn(
            f"optim_wrapper.paramwise_cfg.custom_keys {unmatched} match no parameter name of "
            f"{type(model).__name__}, so they change nothing",
            stacklevel=3,
        )
    for options, params, names in groups:
        logger.debug("param group %s: %d parameters %s", options, len(params), names)
    return [{"params": params, **options} for options, params, _ in groups]


def log_options(full_name: str, options: Mapping[str, Any]) -> None:
    """Log at INFO (current logger) the settings the rules gave the parameter ``full_name``,
    in MMEngine's form, ``paramwise_options -- backbone.bn.weight:weight_decay=0.0``;
    nothing when no rule applied (``options`` empty)."""
    if options:
        settings = ", ".join(f"{key}={value}" for key, value in options.items())
        print_log(f"paramwise_options -- {full_name}:{settings}", logger="current")


class ParamwiseRules:
    """``paramwise_cfg``'s rules, ready to give each parameter its param-group options."""

    def __init__(self, paramwise_cfg: Mapping[str, Any], base_lr: Any, base_wd: Any) -> None:
        self.cfg = paramwise_cfg
        self.custom_keys = paramwise_cfg.get("custom_keys", {})
        # tried longest first, ties alphabetically
        self.sorted_keys = sorted(sorted(self.custom_keys), key=len, reverse=True)
        self.base_lr = base_lr
        self.base_wd = base_wd

    def options(self, module: nn.Module, name: str, param: nn.Parameter, full_name: str) -> dict:
        """The options (``lr``, ``weight_decay``, a custom key's own settings) of ``module``'s
        parameter ``name``, called ``full_name`` in the model; ``{}`` when no rule applies."""
        key = next((key for key in self.sorted_keys if key in full_name), None)
        if key is not None:
            return _custom_options(self.custom_keys[key], self.base_lr, self.base_wd)
        return _rule_options(self.cfg, module, name, param.ndim, self.base_lr, self.base_wd)


def _custom_options(settings: Mapping[str, Any], base_lr: Any, base_wd: Any) -> dict:
    options = {}
    if base_lr is not None:
        options["lr"] = base_lr * settings.get("lr_mult", 1.0)
    if base_wd is not None:
        options["weight_decay"] = base_wd * settings.get("decay_mult", 1.0)
    options.update(settings)  # kept in the group, as MMEngine does (lr_mult, decay_mult, ...)
    return options


def _rule_options(
    cfg: Mapping[str, Any], module: nn.Module, name: str, ndim: int, base_lr: Any, base_wd: Any
) -> dict:
    is_norm = isinstance(module, _NORM_TYPES)
    is_bias = name == "bias"
    options = {}
    if is_bias and not is_norm and cfg.get("bias_lr_mult") is not None:
        options["lr"] = base_lr * cfg["bias_lr_mult"]
    if base_wd is None:
        return options
    is_dwconv = isinstance(module, nn.Conv2d) and module.in_channels == module.groups
    for applies, key in (
        (is_norm, "norm_decay_mult"),
        (is_bias, "bias_decay_mult"),
        (is_dwconv, "dwconv_decay_mult"),
        (ndim == 1, "flat_decay_mult"),
    ):
        if applies and cfg.get(key) is not None:
            options["weight_decay"] = base_wd * cfg[key]
            break
    return options


def _add_to_group(groups: list[tuple[dict, list, list]], options: dict, param, name: str) -> None:
    for group_options, params, names in groups:
        if group_options == options:
            params.append(param)
            names.append(name)
            return
    groups.append((options, [param], [name]))
