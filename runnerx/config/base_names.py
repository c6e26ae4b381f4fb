"""A misspelt ``_base_`` (``_base``, ``__base__``, ``base_``, ``_bases_``...) is refused.

Such a name is an ordinary value, so the config inherits nothing and fails later for lack of a
key (``the config has no model``). MMEngine keeps the name as a plain value; no config means
that on purpose, so a config file without ``_base_`` that gives one of these names config
paths is an error at its file and line::

    c.py:1: '_base' looks like a misspelt _base_: this config inherits nothing from
    '../_base_/default_runtime.py'; rename it to _base_
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any

from .errors import ConfigError
from .source import BASE_KEY, SUPPORTED_SUFFIXES


def refuse_misspelt_base_in_python(tree: ast.Module, path: str) -> None:
    """Raise for a top-level ``_base = 'x.py'`` (a name like ``_base_``) in a ``.py`` config."""
    found = []
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name) and _looks_like_base(target.id):
                try:
                    found.append((target.id, ast.literal_eval(statement.value), statement.lineno))
                except (ValueError, TypeError):
                    pass  # not a literal: not a list of paths
    _refuse(found, path)


def refuse_misspelt_base_in_data(data: dict, text: str, path: str) -> None:
    """Raise for a top-level ``_base: x.py`` (a key like ``_base_``) in a JSON/YAML config."""
    _refuse(
        ((key, data[key], _line_of_key(text, key)) for key in data if _looks_like_base(key)),
        path,
    )


def _looks_like_base(name: Any) -> bool:
    return (
        isinstance(name, str)
        and name != BASE_KEY
        and "_" in name
        and name.strip("_").lower() in ("base", "bases")
    )


def _refuse(items: Iterable[tuple[str, Any, int | None]], path: str) -> None:
    for name, value, line in items:
        paths = [value] if isinstance(value, str) else value
        if (
            isinstance(paths, (list, tuple))
            and paths
            and all(isinstance(p, str) and p.endswith(SUPPORTED_SUFFIXES) for p in paths)
        ):
            where = f"{path}:{line}" if line else path
            raise ConfigError(
                f"{where}: {name!r} looks like a misspelt {BASE_KEY}: this config inherits "
                f"nothing from {value!r}; rename it to {BASE_KEY}"
            )


def _line_of_key(text: str, key: str) -> int | None:
    """The first line of a JSON/YAML file that sets ``key``, if one is found."""
    found = re.search(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*:", text, re.MULTILINE)
    return text.count("\n", 0, found.start()) + 1 if found else None
