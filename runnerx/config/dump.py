"""Writing a config as .py, .json or .yaml text."""

from __future__ import annotations

import json
from typing import Any

from ..fileio import atomic_write
from .pretty import format_config, object_path

_SCALARS = (str, int, float, bool, type(None))


def dump_text(cfg: dict, suffix: str) -> str:
    """The text of ``cfg`` in the format named by a file suffix (``.py``, ``.json``, ``.yaml``).

    JSON and YAML have no tuples: tuples are written as lists there; use ``.py`` to keep them.
    YAML keeps sets (of plain values) and bytes; JSON has neither, and a value that a format
    cannot hold is an error naming its key. Classes and functions in a config are written as
    their import path (``'torch.optim.SGD'``).
    """
    if suffix == ".py":
        return format_config(cfg)
    if suffix == ".json":
        return json.dumps(_data(cfg, (), "JSON"), indent=4) + "\n"
    if suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise ImportError("writing a YAML config needs PyYAML: pip install pyyaml") from None
        data = _data(cfg, (), "YAML")
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    raise ValueError(f"cannot write a config as {suffix!r}: use .py, .json, .yaml or .yml")


def _data(value: Any, path: tuple, kind: str) -> Any:
    """``value`` (at key ``path``) as the plain data that ``kind`` ('JSON' or 'YAML') holds."""
    if isinstance(value, dict):
        return {key: _data(item, (*path, key), kind) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_data(item, (*path, index), kind) for index, item in enumerate(value)]
    if isinstance(value, _SCALARS):
        return value
    if kind == "YAML" and (isinstance(value, bytes) or _is_scalar_set(value)):
        return value
    try:
        return object_path(value)
    except TypeError:
        pass
    where = ".".join(map(str, path)) or "the top level"
    fix = "use a plain value or a module-level class or function there"
    if isinstance(value, (set, frozenset, bytes, complex)):
        fix = "dump to .py, which keeps it"
    raise TypeError(
        f"cannot write the config value at {where} as {kind}: {type(value).__name__} "
        f"{_short(value)} has no {kind} form; {fix}"
    )


def _is_scalar_set(value: Any) -> bool:
    return type(value) is set and all(isinstance(item, _SCALARS) for item in value)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def write_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves the old file or the whole new one."""
    with atomic_write(path) as file:
        file.write(text)
