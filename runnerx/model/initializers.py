"""MMEngine's weight initialisers as functions and classes, for model code that calls them.

The functions initialise one module now (its ``weight``, and its ``bias`` to ``bias``)::

    normal_init(self.conv_cls, std=0.01, bias=bias_init_with_prob(0.01))
    kaiming_init(self.conv, mode='fan_in')

The classes are the ``init_cfg`` entries as objects, registered in WEIGHT_INITIALIZERS under
MMEngine's names: ``KaimingInit(layer='Conv2d')(model)`` does what
``init_cfg=dict(type='Kaiming', layer='Conv2d')`` does (a class given no ``layer`` initialises
nothing, as in MMEngine). Both share :mod:`runnerx.model.weight_init`'s fills.
"""

from __future__ import annotations

import inspect
import math
from typing import Any

from torch import nn

from runnerx.model.weight_init import WEIGHT_FILLS, load_pretrained, module_initializer
from runnerx.registry import WEIGHT_INITIALIZERS


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
    """Base of the ``init_cfg`` initializers: built from an entry of WEIGHT_INITIALIZERS, then
    called on a module. MMEngine's attributes are set here: ``bias`` (from ``bias`` or
    ``bias_prob``), ``layer`` (a list of class names) and ``wholemodule`` (True for an
    ``override``: every sub-module, whatever its class). A custom one, as in MMEngine::

        @WEIGHT_INITIALIZERS.register_module(name='Ones')
        class OnesInit(BaseInit):
            def __call__(self, module):
                for sub in module.modules():
                    if self.applies_to(sub):
                        nn.init.ones_(sub.weight)

        init_cfg = dict(type='Ones', layer='Conv2d')
    """

    def __init__(
        self,
        *,
        bias: float = 0,
        bias_prob: float | None = None,
        layer: str | list[str] | None = None,
    ) -> None:
        name = type(self).__name__
        if not isinstance(bias, (int, float)):
            raise TypeError(f"{name}: bias must be a number, got {bias!r}")
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(f"{name}: bias_prob must be a float, got {bias_prob!r}")
        if layer is not None and not isinstance(layer, (str, list, tuple)):
            raise TypeError(f"{name}: layer must be a class name or a list of them, got {layer!r}")
        self.wholemodule = False
        self.bias = bias if bias_prob is None else bias_init_with_prob(bias_prob)
        self.layer = [layer] if isinstance(layer, str) else list(layer or [])

    def applies_to(self, module: nn.Module) -> bool:
        """Whether ``module`` is one to initialise: any with ``wholemodule``, else one whose
        class, or a direct base class, is named in ``layer``."""
        if self.wholemodule:
            return True
        kind = type(module)
        return not {kind.__name__, *(base.__name__ for base in kind.__bases__)}.isdisjoint(
            self.layer
        )


class _FillInit(BaseInit):
    """A built-in initializer: fills the weight of each module it applies to with one of
    :data:`~runnerx.model.weight_init.WEIGHT_FILLS` (``kind``), and sets its bias. Its
    subclasses take MMEngine's arguments (by position too); ``**kwargs`` are
    :class:`BaseInit`'s ``bias``, ``bias_prob`` and ``layer``."""

    kind = ""

    def __init__(self, **kwargs: Any) -> None:
        common = {key: kwargs.pop(key) for key in ("bias", "bias_prob", "layer") if key in kwargs}
        super().__init__(**common)
        self._init_one = module_initializer(self.kind, {**kwargs, "bias": self.bias})
        arguments = inspect.signature(WEIGHT_FILLS[self.kind]).bind_partial(**kwargs)
        arguments.apply_defaults()
        vars(self).update(arguments.arguments)  # MMEngine's attributes: val, std, mode, ...

    def __call__(self, module: nn.Module) -> None:
        # apply() visits children before their parent, the order MMEngine draws weights in
        module.apply(lambda sub: self._init_one(sub) if self.applies_to(sub) else None)


@WEIGHT_INITIALIZERS.register_module(name="Constant")
class ConstantInit(_FillInit):
    """``init_cfg=dict(type='Constant', val=...)``: weights filled with ``val``."""

    kind = "Constant"

    def __init__(self, val: float, **kwargs: Any) -> None:
        super().__init__(val=val, **kwargs)


@WEIGHT_INITIALIZERS.register_module(name="Xavier")
class XavierInit(_FillInit):
    """``init_cfg=dict(type='Xavier', gain=1, distribution='normal')`` (or ``'uniform'``)."""

    kind = "Xavier"

    def __init__(self, gain: float = 1, distribution: str = "normal", **kwargs: Any) -> None:
        super().__init__(gain=gain, distribution=distribution, **kwargs)


@WEIGHT_INITIALIZERS.register_module(name="Normal")
class NormalInit(_FillInit):
    """``init_cfg=dict(type='Normal', mean=0, std=1)``."""

    kind = "Normal"

    def __init__(self, mean: float = 0, std: float = 1, **kwargs: Any) -> None:
        super().__init__(mean=mean, std=std, **kwargs)


@WEIGHT_INITIALIZERS.register_module(name="TruncNormal")
class TruncNormalInit(_FillInit):
    """``init_cfg=dict(type='TruncNormal', mean=0, std=1, a=-2, b=2)``: a normal
    distribution truncated to ``[a, b]``."""

    kind = "TruncNormal"

    def __init__(
        self, mean: float = 0, std: float = 1, a: float = -2, b: float = 2, **kwargs: Any
    ) -> None:
        super().__init__(mean=mean, std=std, a=a, b=b, **kwargs)


@WEIGHT_INITIALIZERS.register_module(name="Uniform")
class UniformInit(_FillInit):
    """``init_cfg=dict(type='Uniform', a=0, b=1)``."""

    kind = "Uniform"

    def __init__(self, a: float = 0, b: float = 1, **kwargs: Any) -> None:
        super().__init__(a=a, b=b, **kwargs)


@WEIGHT_INITIALIZERS.register_module(name="Kaiming")
class KaimingInit(_FillInit):
    """``init_cfg=dict(type='Kaiming', a=0, mode='fan_out', nonlinearity='relu',
    distribution='normal')``."""

    kind = "Kaiming"

    def __init__(
        self,
        a: float = 0,
        mode: str = "fan_out",
        nonlinearity: str = "relu",
        distribution: str = "normal",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            a=a, mode=mode, nonlinearity=nonlinearity, distribution=distribution, **kwargs
        )


@WEIGHT_INITIALIZERS.register_module(name="Caffe2Xavier")
class Caffe2XavierInit(_FillInit):
    """``init_cfg=dict(type='Caffe2Xavier')``: Caffe2's "XavierFill"."""

    kind = "Caffe2Xavier"


@WEIGHT_INITIALIZERS.register_module(name="Pretrained")
class PretrainedInit:
    """``init_cfg=dict(type='Pretrained', checkpoint=..., prefix=None, map_location='cpu')``
    as an object: calling it on a model loads the checkpoint's weights into it."""

    def __init__(self, checkpoint: str, prefix: str | None = None, map_location: Any = "cpu"):
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location

    def __call__(self, module: nn.Module) -> None:
        load_pretrained(module, self.checkpoint, self.prefix, self.map_location)
