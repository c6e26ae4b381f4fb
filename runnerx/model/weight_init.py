"""Weight initialisation from an ``init_cfg``, with MMEngine's initializer names and arguments.

``init_cfg`` is a dict or a list of dicts. ``layer`` names the module classes to initialise
(a class matches by its own name or the name of a direct base class); ``override`` initialises
one named child as a whole, whatever its layers::

    init_cfg = [
        dict(type='Kaiming', layer='Conv2d'),
        dict(type='Normal', layer='Linear', std=0.01, bias=0,
             override=dict(name='head', type='Constant', val=0)),
        dict(type='Pretrained', checkpoint='work_dirs/backbone.pth', prefix='backbone.'),
    ]

As in MMEngine, an entry with neither ``layer`` nor ``override`` initialises nothing.

The names of ``mmengine.model.weight_init`` are here too (the initializer functions and
classes come from :mod:`runnerx.model.initializers` when first used), so that model code
ported from MMEngine keeps its imports::

    from runnerx.model.weight_init import constant_init, trunc_normal_, trunc_normal_init
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn
from torch.nn.init import trunc_normal_

from runnerx.model.errors import InitCfgOverrideError
from runnerx.registry import WEIGHT_INITIALIZERS, NotRegisteredError
from runnerx.suggest import close_matches, did_you_mean
from runnerx.utils import lazy_attributes
from runnerx.utils.errors import ValueAssertionError, ValueKeyError

logger = logging.getLogger(__name__)

#: mmengine.model.weight_init's names that runnerx.model.initializers defines (it imports
#: this module, so they are looked up when first used)
_INITIALIZER_NAMES = (
    "BaseInit",
    "Caffe2XavierInit",
    "ConstantInit",
    "KaimingInit",
    "NormalInit",
    "PretrainedInit",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "caffe2_xavier_init",
    "constant_init",
    "kaiming_init",
    "normal_init",
    "trunc_normal_init",
    "uniform_init",
    "xavier_init",
)
__getattr__ = lazy_attributes(
    __name__, dict.fromkeys(_INITIALIZER_NAMES, "runnerx.model.initializers")
)
__all__ = [
    *_INITIALIZER_NAMES,
    "WEIGHT_FILLS",
    "build_initializer",
    "initialize",
    "load_pretrained",
    "module_initializer",
    "trunc_normal_",
    "update_init_info",
]


def _fill_normal(weight: torch.Tensor, mean: float = 0, std: float = 1) -> None:
    nn.init.normal_(weight, mean, std)


def _fill_constant(weight: torch.Tensor, val: float) -> None:
    nn.init.constant_(weight, val)


def _fill_uniform(weight: torch.Tensor, a: float = 0, b: float = 1) -> None:
    nn.init.uniform_(weight, a, b)


def _fill_trunc_normal(
    weight: torch.Tensor, mean: float = 0, std: float = 1, a: float = -2, b: float = 2
) -> None:
    nn.init.trunc_normal_(weight, mean, std, a, b)


def _fill_xavier(weight: torch.Tensor, gain: float = 1, distribution: str = "normal") -> None:
    fill = nn.init.xavier_uniform_ if _is_uniform(distribution) else nn.init.xavier_normal_
    fill(weight, gain=gain)


def _fill_kaiming(
    weight: torch.Tensor,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    distribution: str = "normal",
) -> None:
    fill = nn.init.kaiming_uniform_ if _is_uniform(distribution) else nn.init.kaiming_normal_
    fill(weight, a=a, mode=mode, nonlinearity=nonlinearity)


def _is_uniform(distribution: str) -> bool:
    if distribution not in ("normal", "uniform"):
        raise ValueAssertionError(
            f"init_cfg distribution must be 'normal' or 'uniform', not {distribution!r}"
        )
    return distribution == "uniform"


#: ``init_cfg`` type name -> function filling a weight tensor (its keyword arguments are the
#: initializer's own keys; ``bias``, ``bias_prob``, ``layer`` and ``override`` are common to all).
WEIGHT_FILLS: dict[str, Callable[..., None]] = {
    "Normal": _fill_normal,
    "Constant": _fill_constant,
    "Uniform": _fill_uniform,
    "TruncNormal": _fill_trunc_normal,
    "Xavier": _fill_xavier,
    "Kaiming": _fill_kaiming,
    "Caffe2Xavier": functools.partial(
        _fill_kaiming, a=1, mode="fan_in", nonlinearity="leaky_relu", distribution="uniform"
    ),
}


def initialize(module: nn.Module, init_cfg: Mapping | list[Mapping]) -> None:
    """Initialise ``module``'s weights as ``init_cfg`` (a dict or a list of dicts) says.

    Each entry is built from WEIGHT_INITIALIZERS (so a registered :class:`BaseInit` subclass
    is a type as well as the built-in ones) and called on ``module``; then its ``override``
    entries are built and called on the named children, as a whole.
    """
    if isinstance(init_cfg, Mapping):
        init_cfg = [init_cfg]
    if not isinstance(init_cfg, (list, tuple)):
        raise TypeError(f"init_cfg must be a dict or a list of dicts, but got {type(init_cfg)}")
    for cfg in init_cfg:
        cfg = dict(copy.deepcopy(cfg))  # an init_cfg may be shared by several modules
        overrides = _override_entries(cfg.pop("override", None))
        initializer = build_initializer(cfg)
        initializer(module)
        _warn_if_no_layer_matched(module, initializer, cfg)
        cfg.pop("layer", None)
        for entry in overrides:
            _initialize_override(module, entry, cfg)


def _override_entries(override: Any) -> list[dict]:
    """An entry's ``override`` (None, a dict or a list of dicts) as a list of dicts, refused
    before anything is initialised when it has another form."""
    entries = [] if override is None else [override] if isinstance(override, Mapping) else override
    if not isinstance(entries, (list, tuple)) or not all(
        isinstance(entry, Mapping) for entry in entries
    ):
        raise TypeError(
            "init_cfg.override must be a dict or a list of dicts, each naming a child module, "
            f"e.g. override=dict(name='head', type='Constant', val=0), but got {override!r}"
        )
    return [dict(entry) for entry in entries]


def build_initializer(cfg: dict, wholemodule: bool = False) -> Callable[[nn.Module], None]:
    """The initializer an init_cfg entry names, built from WEIGHT_INITIALIZERS.

    ``wholemodule=True`` (for an ``override``) makes it initialise every sub-module, whatever
    its ``layer``.
    """
    kind = cfg.get("type")
    if kind is None:
        raise _unknown_type(kind)
    try:
        initializer = WEIGHT_INITIALIZERS.build(cfg)
    except NotRegisteredError as error:
        if error.key != kind:  # raised by a build nested in this one
            raise
        raise _unknown_type(kind) from None
    initializer.wholemodule = wholemodule
    return initializer


def _unknown_type(kind: Any) -> ValueKeyError:
    names = list(WEIGHT_INITIALIZERS.module_dict)
    hint = did_you_mean(kind, names)
    return ValueKeyError(
        f"init_cfg type {kind!r} is not one of {names}{hint} (a custom initializer is "
        "registered with @WEIGHT_INITIALIZERS.register_module())"
    )


def _warn_if_no_layer_matched(module: nn.Module, initializer: Any, cfg: dict) -> None:
    """Warn when an entry's ``layer`` names no class of ``module``'s sub-modules: the entry
    then initialises nothing, which MMEngine does silently (``layer='Conv'`` for ``Conv2d``)."""
    layers = getattr(initializer, "layer", None)
    applies_to = getattr(initializer, "applies_to", None)
    if not layers or applies_to is None or any(applies_to(sub) for sub in module.modules()):
        return
    kinds = list(dict.fromkeys(type(sub).__name__ for sub in module.modules()))
    matches = {name: close_matches(name, kinds, n=1) for name in layers}
    hints = [f"{close[0]!r} for {name!r}" for name, close in matches.items() if close]
    if len(layers) == 1 and hints:
        hints = [repr(matches[layers[0]][0])]
    hint = f"; did you mean {', '.join(hints)}?" if hints else ""
    logger.warning(
        "init_cfg (type=%r, layer=%r) of %s matched no module, so it initialised nothing: "
        "layer names module classes (or a direct base class), and the module types in %s are "
        "%s%s",
        cfg.get("type"),
        cfg.get("layer"),
        type(module).__name__,
        type(module).__name__,
        ", ".join(kinds),
        hint,
    )


def _initialize_override(module: nn.Module, entry: dict, parent_cfg: dict) -> None:
    name = entry.pop("name", None)
    if name is None:
        raise ValueError(f"init_cfg override needs a 'name' key (the child to initialise): {entry}")
    target = getattr(module, name, None)
    if not isinstance(target, nn.Module):
        children = [child for child, _ in module.named_children()]
        raise InitCfgOverrideError(
            f"init_cfg override names {name!r}, but {type(module).__name__} has no such "
            f"child module (children: {children})"
        )
    if not entry:  # a bare name: initialise that child like the parent entry
        entry = dict(parent_cfg)
    elif "type" not in entry:
        raise ValueError(
            f"init_cfg override {name!r} has {sorted(entry)} but no 'type'; give one, or give "
            "only the name to initialise that child as the parent entry says"
        )
    build_initializer(entry, wholemodule=True)(target)


def module_initializer(kind: str, cfg: dict) -> Callable[[nn.Module], None]:
    """A function that initialises one module's ``weight`` with the fill ``kind`` (a key of
    :data:`WEIGHT_FILLS`) given the arguments in ``cfg``, and its ``bias`` to ``cfg['bias']``;
    bad arguments fail here, before any module is touched."""
    fill = WEIGHT_FILLS[kind]
    bias = cfg.pop("bias", 0)
    try:
        inspect.signature(fill).bind(None, **cfg)
    except TypeError:
        allowed = [p for p in inspect.signature(fill).parameters if p != "weight"]
        raise TypeError(
            f"init_cfg type {kind!r} takes {allowed} (plus bias, bias_prob, layer, override), "
            f"but got {sorted(cfg)}"
        ) from None
    if "distribution" in cfg:
        _is_uniform(cfg["distribution"])  # a bad one fails here, not at the first layer

    def init_one(sub: nn.Module) -> None:
        weight = getattr(sub, "weight", None)
        if isinstance(weight, torch.Tensor):
            fill(weight, **cfg)
        if isinstance(getattr(sub, "bias", None), torch.Tensor):
            nn.init.constant_(sub.bias, bias)

    return init_one


def load_pretrained(
    module: nn.Module, checkpoint: str, prefix: str | None = None, map_location: Any = "cpu"
) -> None:
    """Load weights from ``checkpoint`` into ``module``, non-strictly: anything ``load_from``
    reads (a file, an http(s) URL, a storage backend's prefix, ``torchvision://``,
    ``open-mmlab://``, ``mmcls://``), safely, through ``CheckpointLoader``.

    A checkpoint dict with a ``'state_dict'`` key (MMEngine's
    layout) is read from that key; a leading ``module.`` (from DDP) is dropped from the names.
    ``prefix='backbone.'`` (or ``'backbone'``) loads only the entries under that prefix, with
    the prefix removed.
    """
    from runnerx.checkpoint import load_model_weights
    from runnerx.checkpoint.model_state import checkpoint_weights, load_checkpoint_with_prefix

    try:
        if prefix:
            state = load_checkpoint_with_prefix(prefix, checkpoint, map_location)
        else:
            state = checkpoint_weights(checkpoint, map_location)
    except (ValueError, FileNotFoundError) as error:  # no reader, no weights, no file
        raise type(error)(f"init_cfg Pretrained checkpoint: {error}") from error
    missing, unexpected = load_model_weights(module, state, strict=False)
    logger.info("loaded pretrained weights from %s", checkpoint)
    if missing:
        logger.warning("weights missing from %s: %s", checkpoint, missing)
    if unexpected:
        logger.warning("weights in %s that the model lacks: %s", checkpoint, unexpected)


def update_init_info(module: nn.Module, init_info: str) -> None:
    """Record ``init_info`` (what an initializer did) for each parameter of ``module`` whose
    values changed since ``module._params_init_info`` last recorded them: MMEngine's
    per-parameter initialisation report, for initializers written for MMEngine that call it.
    runnerx's BaseModule keeps no such report, so nothing in runnerx calls this."""
    records = getattr(module, "_params_init_info", None)
    if records is None:
        raise ValueAssertionError(
            f"{type(module).__name__} has no _params_init_info to update (update_init_info "
            "is for modules that keep MMEngine's initialisation report)"
        )
    for name, param in module.named_parameters():
        if param not in records:
            raise ValueAssertionError(
                f"{type(module).__name__}.{name} is a new parameter: an initializer must not "
                "add or replace parameters"
            )
        mean = param.detach().mean().cpu()
        if records[param]["tmp_mean_value"] != mean:
            records[param].update(init_info=init_info, tmp_mean_value=mean)
