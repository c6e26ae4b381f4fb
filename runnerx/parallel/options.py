"""Checks of the parallel config values (``strategy``, ``compile``, ...), with helpful errors."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch

from runnerx.suggest import did_you_mean

_DTYPES = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}


def check_keys(cfg: Mapping[str, Any], allowed: Iterable[str], where: str) -> None:
    """Refuse a key of ``cfg`` that is not in ``allowed``, naming ``where.key`` and a close one."""
    allowed = tuple(allowed)
    for key in cfg:
        if key not in allowed:
            raise KeyError(
                f"{where}.{key} is not a known key (known: {', '.join(allowed)})"
                f"{did_you_mean(key, allowed)}"
            )


def check_choice(value: Any, choices: Iterable[Any], where: str) -> None:
    """Refuse ``value`` unless it is one of ``choices``."""
    choices = tuple(choices)
    if value not in choices:
        raise ValueError(
            f"{where}={value!r} is not valid; expected one of "
            f"{', '.join(repr(c) for c in choices)}{did_you_mean(value, choices)}"
        )


def as_dict(value: Any, where: str, example: str) -> dict:
    """``value`` as a plain dict: ``True`` is ``{}``; anything but a mapping is an error."""
    if value is True:
        return {}
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{where} must be True or a dict such as {example}, but got {value!r}")


def resolve_dtype(value: Any, where: str) -> torch.dtype | None:
    """The torch dtype ``value`` names ('bfloat16', 'float16', 'float32' or a dtype), or None."""
    if value is None or isinstance(value, torch.dtype):
        return value
    check_choice(value, _DTYPES, where)
    return _DTYPES[value]
