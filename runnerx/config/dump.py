"""Writing a config as .py, .json or .yaml text."""

from __future__ import annotations

import json
from typing import Any

from ..fileio import atomic_write
from .pretty import object_path


def dump_text(cfg: dict, suffix: str, python_text: str) -> str:
    """The text of ``cfg`` in the format named by a file suffix (``.py``, ``.json``, ``.yaml``).

    JSON and YAML have no tuples: tuples are written as lists there; use ``.py`` to keep them.
    Classes and functions in a config are written as their import path (``'torch.optim.SGD'``).
    """
    if suffix == ".py":
        return python_text
    if suffix == ".json":
        return json.dumps(cfg, indent=4, default=object_path) + "\n"
    if suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ImportError("writing a YAML config needs PyYAML: pip install pyyaml") from None
        return yaml.safe_dump(_yaml_ready(cfg), sort_keys=False, allow_unicode=True)
    raise ValueError(f"cannot write a config as {suffix!r}: use .py, .json, .yaml or .yml")


def _yaml_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _yaml_ready(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_yaml_ready(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return object_path(value)


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves the old file or the whole new one."""
    with atomic_write(path) as file:
        file.write(text)
