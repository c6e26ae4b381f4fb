"""``Config.diff``: what differs between two configs, as a unified diff of their Python text."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from .pretty import format_config


def config_diff(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """A unified diff (``-`` lines from ``first``, ``+`` lines from ``second``) of two config
    dicts written as Python. Keys are sorted first, so two configs that only order their keys
    differently have no diff (MMEngine's ``pretty_text`` sorts keys, which gives it the same
    property). Equal configs give ``'\\n'``, as MMEngine's ``Config.diff`` does."""
    lines = [format_config(_sorted(cfg)).split("\n") for cfg in (first, second)]
    return "".join(f"{line}\n" for line in difflib.unified_diff(*lines)) + "\n"


def _sorted(value: Any) -> Any:
    """``value`` with the keys of every dict in it sorted (by their text: keys may mix types)."""
    if isinstance(value, Mapping):
        return {key: _sorted(value[key]) for key in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return type(value)(_sorted(item) for item in value)
    return value
