"""Gradient clipping as ``optim_wrapper.clip_grad`` configures it (MMEngine's two forms)::

clip_grad=dict(max_norm=1.0, norm_type=2, error_if_nonfinite=False)  # clip_grad_norm_
clip_grad=dict(type='value', clip_value=0.5)                         # clip_grad_value_
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import torch

from runnerx.registry.errors import mark_wrapped
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

GradClipFn = Callable[[list[torch.Tensor]], "torch.Tensor | None"]

_FORMS = (
    "dict(max_norm=..., norm_type=2, error_if_nonfinite=False) (clip by norm, type='norm' may "
    "be given) or dict(type='value', clip_value=...)"
)
# (function, the keys it takes, the key it needs) per clip type
_CLIP_TYPES = {
    "norm": (
        torch.nn.utils.clip_grad_norm_,
        ("max_norm", "norm_type", "error_if_nonfinite", "foreach"),
        "max_norm",
    ),
    "value": (torch.nn.utils.clip_grad_value_, ("clip_value", "foreach"), "clip_value"),
}


def build_grad_clip(
    clip_grad: Mapping[str, Any] | None,
) -> tuple[GradClipFn | None, dict | None]:
    """Turn a ``clip_grad`` config into ``(clip function, its keyword arguments)``, or
    ``(None, None)`` for ``clip_grad=None``.

    The function takes the list of parameters to clip; clipping by norm returns the total
    norm (a tensor), clipping by value returns None. ``clip_grad`` itself is not changed.
    """
    if clip_grad is None:  # no clipping: MMEngine's clip_grad_kwargs is None then
        return None, None
    if not isinstance(clip_grad, Mapping) or not clip_grad:
        raise _bad(TypeAssertionError, clip_grad, "it must be a non-empty dict")
    kwargs = dict(clip_grad)
    clip_type = kwargs.pop("type", "norm")
    if clip_type not in _CLIP_TYPES:
        raise _bad(ValueError, clip_grad, f"type={clip_type!r} is neither 'norm' nor 'value'")
    function, accepted, required = _CLIP_TYPES[clip_type]
    for key in kwargs:
        if key not in accepted:
            why = f"{key!r} is not an argument of clipping by {clip_type}"
            raise _bad(ValueError, clip_grad, why, did_you_mean(key, accepted, form=SENTENCE))
    if required not in kwargs:
        raise _bad(ValueAssertionError, clip_grad, f"clipping by {clip_type} needs {required!r}")
    return functools.partial(function, **kwargs), kwargs


def _bad(kind: type[Exception], clip_grad: Any, why: str, hint: str = "") -> BaseException:
    # it names its key: no "while building type=OptimWrapper" goes in front of it
    message = f"optim_wrapper.clip_grad={clip_grad!r} is not valid: {why}. Expected {_FORMS}."
    return mark_wrapped(kind(message + hint))
