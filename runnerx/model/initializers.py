"""MMEngine's weight initialisers as functions and classes, for model code that calls them.

The functions initialise one module now (its ``weight``, and its ``bias`` to ``bias``)::

    normal_init(self.conv_cls, std=0.01, bias=bias_init_with_prob(0.01))
    kaiming_init(self.conv, mode='fan_in')

The classes are the ``init_cfg`` entries as objects: ``KaimingInit(layer='Conv2d')(model)``
does what ``init_cfg=dict(type='Kaiming', layer='Conv2d')`` does (a class given no ``layer``
initialises nothing, as in MMEngine). Both share :mod:`runnerx.model.weight_init`'s fills.
"""

from __future__ import annotations

import math
from typing import Any

from torch import nn

from runnerx.model.weight_init import initialize, load_pretrained, module_initializer


def _init_module(module: nn.Module, kind: str, bias: float, **fill_args: Any) -> None:
    module_initializer(kind, {**fill_args, "bias": bias})(module)


def constant_init(module: nn.Module, val: float, bias: float = 0) -> None:
    """Fill ``module.weight`` with ``val``."""
    _init_module(module, "Constant", bias, val=val)


def xavier_init(
    module: nn.Module, gain: float = 1, bias: float = 0, distribution: str = "normal"
) -> None:
    """Xavier (Glorot) initialisation, ``'normal'`` or ``'uniform'``."""
    _init_module(module, "Xavier", bias, gain=gain, distribution=distribution)


def normal_init(module: nn.Module, mean: float = 0, std: float = 1, bias: float = 0) -> None:
    """Normal distribution ``N(mean, std**2)``."""
    _init_module(module, "Normal", bias, mean=mean, std=std)


def trunc_normal_init(
    module: nn.Module,
    mean: float = 0,
    std: float = 1,
    a: float = -2,
    b: float = 2,
    bias: float = 0,
) -> None:
    """Normal distribution truncated to ``[a, b]``."""
    _init_module(module, "TruncNormal", bias, mean=mean, std=std, a=a, b=b)


def uniform_init(module: nn.Module, a: float = 0, b: float = 1, bias: float = 0) -> None:
    """Uniform distribution on ``[a, b)``."""
    _init_module(module, "Uniform", bias, a=a, b=b)


def kaiming_init(
    module: nn.Module,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    bias: float = 0,
    distribution: str = "normal",
) -> None:
    """Kaiming (He) initialisation, ``'normal'`` or ``'uniform'``."""
    _init_module(
        module,
        "Kaiming",
        bias,
        a=a,
        mode=mode,
        nonlinearity=nonlinearity,
        distribution=distribution,
    )


def caffe2_xavier_init(module: nn.Module, bias: float = 0) -> None:
    """Caffe2's "XavierFill": Kaiming uniform with ``a=1``, ``fan_in``, leaky ReLU."""
    _init_module(module, "Caffe2Xavier", bias)


def bias_init_with_prob(prior_prob: float) -> float:
    """The bias whose sigmoid is ``prior_prob`` (a classifier's prior, as in focal loss)."""
    return float(-math.log((1 - prior_prob) / prior_prob))


class BaseInit:
    """An ``init_cfg`` entry as an object: calling it on a model initialises the sub-modules
    whose class (or a direct base class) is named in ``layer``."""

    kind = ""

    def __init__(
        self,
        *,
        bias: float = 0,
        bias_prob: float | None = None,
        layer: str | list[str] | None = None,
        **fill_args: Any,
    ) -> None:
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(f"{type(self).__name__}: bias_prob must be a float, got {bias_prob!r}")
        self.bias = bias
        self.bias_prob = bias_prob
        self.layer = [layer] if isinstance(layer, str) else list(layer or [])
        self.cfg = {"type": self.kind, "bias": bias, "layer": self.layer, **fill_args}
        if bias_prob is not None:
            self.cfg["bias_prob"] = bias_prob
        module_initializer(self.kind, {**fill_args, "bias": bias})  # bad arguments fail now

    def __call__(self, module: nn.Module) -> None:
        initialize(module, self.cfg)


def _initializer_class(kind: str, doc: str, **defaults: Any) -> type[BaseInit]:
    def __init__(self: BaseInit, **kwargs: Any) -> None:
        BaseInit.__init__(self, **{**defaults, **kwargs})

    return type(f"{kind}Init", (BaseInit,), {"kind": kind, "__init__": __init__, "__doc__": doc})


ConstantInit = _initializer_class("Constant", "``init_cfg=dict(type='Constant', val=...)``.")
XavierInit = _initializer_class("Xavier", "``init_cfg=dict(type='Xavier', gain=1, ...)``.")
NormalInit = _initializer_class("Normal", "``init_cfg=dict(type='Normal', mean=0, std=1)``.")
TruncNormalInit = _initializer_class(
    "TruncNormal", "``init_cfg=dict(type='TruncNormal', mean=0, std=1, a=-2, b=2)``."
)
UniformInit = _initializer_class("Uniform", "``init_cfg=dict(type='Uniform', a=0, b=1)``.")
KaimingInit = _initializer_class("Kaiming", "``init_cfg=dict(type='Kaiming', mode=...)``.")
Caffe2XavierInit = _initializer_class("Caffe2Xavier", "``init_cfg=dict(type='Caffe2Xavier')``.")


class PretrainedInit:
    """``init_cfg=dict(type='Pretrained', checkpoint=..., prefix=None, map_location='cpu')``
    as an object: calling it on a model loads the checkpoint's weights into it."""

    def __init__(self, checkpoint: str, prefix: str | None = None, map_location: Any = "cpu"):
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location

    def __call__(self, module: nn.Module) -> None:
        load_pretrained(module, self.checkpoint, self.prefix, self.map_location)
