"""Checks on dotted-key options (``--cfg-options a.b=1``) against a config, before they merge.

An option whose key leads below a value that holds no keys, or past the end of a list, is
refused with an error that names the option as typed (MMEngine's error types: ``TypeError``
and ``KeyError``). An option that adds a key the config lacks, while a key of that name exists
elsewhere, gets a warning naming it: ``--cfg-options max_epochs=3`` adds an unused top-level
key, and the config has ``train_cfg.max_epochs``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from runnerx.suggest import more_than

from .dict_action import parse_option_value
from .errors import ConfigKeyError, ConfigTypeError
from .merge import DELETE_KEY

_SHOWN = 3  # suggestions named in one warning


def check_options(
    cfg: Mapping, options: Mapping[str, Any], source: str, allow_list_keys: bool = True
) -> list[str]:
    """Raise for an option of ``options`` that cannot merge into ``cfg``; return a warning for
    each that adds a key the config lacks while one of that name exists elsewhere in it.

    ``source`` starts each message (``'--cfg-options'``). An option below a key that the
    options replace (``model.init_cfg._delete_=True``) is not checked.
    """
    suffix = f".{DELETE_KEY}"
    replaced = {key[: -len(suffix)] for key, on in options.items() if key.endswith(suffix) and on}
    found = []
    for key, value in options.items():
        parts = key.split(".")
        option = f"{source} {key}={_as_typed(value)}"
        missing = _first_missing(cfg, parts, replaced, option, value, allow_list_keys)
        if missing is not None:
            hint = _same_name_elsewhere(cfg, parts, missing, value)
            if hint:
                found.append(f"{option} adds a key the config did not have; {hint}")
    return found


def _first_missing(
    cfg: Mapping,
    parts: list[str],
    replaced: set[str],
    option: str,
    value: Any,
    allow_list_keys: bool,
) -> int | None:
    """The index of the first part of the key that ``cfg`` lacks (None: it has them all)."""
    node: Any = cfg
    for index, part in enumerate(parts):
        where = ".".join(parts[:index])
        if where in replaced or part == DELETE_KEY:
            return None
        if isinstance(node, Mapping):
            if part not in node:
                return index
            node = node[part]
        elif isinstance(node, list) and allow_list_keys:
            if not part.isdigit():
                raise ConfigTypeError(
                    f"{option}: {where} is a list, so the key after it must be an index: "
                    f"{_entries(where, node)}"
                )
            if int(part) >= len(node):
                raise ConfigKeyError(f"{option}: {_entries(where, node)}")
            node = node[int(part)]
        else:
            raise ConfigTypeError(f"{option}: {_holds_no_keys(where, node, value)}")
    return None


def _entries(where: str, items: list) -> str:
    if not items:
        return f"{where} is an empty list"
    if len(items) == 1:
        return f"{where} has 1 entry (index 0)"
    return f"{where} has {len(items)} entries (indexes 0-{len(items) - 1})"


def _holds_no_keys(where: str, node: Any, value: Any) -> str:
    if node is None:
        return (
            f"{where} is None, so nothing can be set below it; to make it a dict, add the "
            f"option {where}.{DELETE_KEY}=True"
        )
    said = f"{where} is a {type(node).__name__} ({node!r}), so nothing can be set below it"
    if isinstance(node, (list, tuple)):
        brackets = "[...]" if isinstance(node, list) else "(...)"
        return f"{said}; set it whole: {where}={brackets}"
    return f"{said}; did you mean {where}={_as_typed(value)}?"


def _same_name_elsewhere(cfg: Mapping, parts: list[str], missing: int, value: Any) -> str:
    """Where the config has a key named as the one the option adds, as a hint (or '')."""
    name, rest = parts[missing], parts[missing + 1 :]
    places = [path for path in _key_paths(cfg, ()) if path[-1] == name]
    if not places:
        return ""
    complete = [path for path in places if _has_path(cfg, (*path, *rest))]
    places = complete or places
    shown = [".".join((*path, *rest)) for path in places[:_SHOWN]]
    meant = " or ".join(f"{key}={_as_typed(value)}" for key in shown)
    more = more_than(_SHOWN, len(places))
    has = ", ".join(".".join(path) for path in places[:_SHOWN])
    return f"the config has {has}{more} (did you mean {meant}?)"


def _key_paths(node: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    """Every key path of a config, list indexes included, parents before children."""
    if isinstance(node, Mapping):
        items = ((str(key), item) for key, item in node.items())
    elif isinstance(node, list):
        items = ((str(index), item) for index, item in enumerate(node))
    else:
        return
    for key, item in items:
        yield (*prefix, key)
        yield from _key_paths(item, (*prefix, key))


def _has_path(node: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _as_typed(value: Any) -> str:
    """A value as it would be typed after ``key=`` on the command line."""
    if isinstance(value, str) and parse_option_value(value) == value:
        return value
    return repr(value)
