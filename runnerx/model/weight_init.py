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
"""

from __future__ import annotations

import copy
import functools
import inspect
import logging
import math
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from runnerx.suggest import close_matches

logger = logging.getLogger(__name__)


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
        raise ValueError(
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
    """Initialise ``module``'s weights as ``init_cfg`` (a dict or a list of dicts) says."""
    if isinstance(init_cfg, Mapping):
        init_cfg = [init_cfg]
    if not isinstance(init_cfg, (list, tuple)):
        raise TypeError(f"init_cfg must be a dict or a list of dicts, but got {type(init_cfg)}")
    for cfg in init_cfg:
        cfg = dict(copy.deepcopy(cfg))
        kind = cfg.pop("type", None)
        if kind == "Pretrained":
            load_pretrained(module, **cfg)
            continue
        override = cfg.pop("override", None)
        layers = cfg.pop("layer", None) or []
        init_one = module_initializer(kind, cfg)
        layers = {layers} if isinstance(layers, str) else set(layers)
        if layers:
            for sub in module.modules():
                names = {type(sub).__name__, *(base.__name__ for base in type(sub).__bases__)}
                if names & layers:
                    init_one(sub)
        for entry in [override] if isinstance(override, Mapping) else override or []:
            _initialize_override(module, dict(entry), kind, cfg)


def _initialize_override(module: nn.Module, entry: dict, kind: Any, parent_cfg: dict) -> None:
    name = entry.pop("name", None)
    if name is None:
        raise ValueError(f"init_cfg override needs a 'name' key (the child to initialise): {entry}")
    target = getattr(module, name, None)
    if not isinstance(target, nn.Module):
        children = [child for child, _ in module.named_children()]
        raise ValueError(
            f"init_cfg override names {name!r}, but {type(module).__name__} has no such "
            f"child module (children: {children})"
        )
    if not entry:  # a bare name: initialise that child like the parent entry
        entry = dict(parent_cfg, type=kind)
    init_one = module_initializer(entry.pop("type", None), entry)
    target.apply(init_one)


def module_initializer(kind: Any, cfg: dict) -> Callable[[nn.Module], None]:
    """A function that initialises one module's ``weight`` and ``bias`` per an init_cfg entry."""
    if kind not in WEIGHT_FILLS:
        close = close_matches(str(kind), [*WEIGHT_FILLS, "Pretrained"], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(
            f"init_cfg type {kind!r} is not one of {[*WEIGHT_FILLS, 'Pretrained']}{hint}"
        )
    fill = WEIGHT_FILLS[kind]
    bias = cfg.pop("bias", 0)
    bias_prob = cfg.pop("bias_prob", None)
    if bias_prob is not None:  # the bias that makes sigmoid(bias) == bias_prob
        bias = -math.log((1 - bias_prob) / bias_prob)
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
    """Load weights from a checkpoint file (or http(s) URL) into ``module``, non-strictly.

    Reads with ``weights_only=True``. A checkpoint dict with a ``'state_dict'`` key (MMEngine's
    layout) is read from that key; a leading ``module.`` (from DDP) is dropped from the names.
    ``prefix='backbone.'`` loads only the entries under that prefix, with the prefix removed.
    """
    from runnerx.checkpoint import load_model_weights

    state = _read_checkpoint(checkpoint, map_location)
    if isinstance(state, Mapping) and "state_dict" in state:
        state = state["state_dict"]
    state = {key.removeprefix("module."): value for key, value in state.items()}
    if prefix:
        state = {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}
        if not state:
            raise ValueError(f"no weight in {checkpoint} has a name that starts with {prefix!r}")
    missing, unexpected = load_model_weights(module, state, strict=False)
    logger.info("loaded pretrained weights from %s", checkpoint)
    if missing:
        logger.warning("weights missing from %s: %s", checkpoint, missing)
    if unexpected:
        logger.warning("weights in %s that the model lacks: %s", checkpoint, unexpected)


def _read_checkpoint(checkpoint: str, map_location: Any) -> Mapping:
    from runnerx.checkpoint.loader import CheckpointLoader

    try:
        return CheckpointLoader.load_checkpoint(checkpoint, map_location)
    except ValueError as error:  # a name no reader takes
        raise ValueError(f"init_cfg Pretrained checkpoint: {error}") from error
