"""How a child config, or a set of command-line options, is merged into what it inherits.

The rules are MMEngine's, so inherited configs mean the same here:

* dicts merge key by key, recursively;
* ``_delete_=True`` in a child dict replaces the inherited dict instead of merging into it;
* anything that is not a dict (lists and tuples included) replaces the inherited value;
* a child dict over an inherited non-dict is an error unless it says ``_delete_=True``;
* with ``allow_list_keys`` (command-line options), a key ``'0'``, ``'1'``... indexes a list,
  and the entry there merges as a dict's key would (``_delete_=True`` replaces it).
"""

from __future__ import annotations

from typing import Any

from .errors import ConfigKeyError, MergeTypeError

DELETE_KEY = "_delete_"


def merge_into(
    child: dict, base: dict | list, allow_list_keys: bool = False, key_path: str = ""
) -> Any:
    """Return ``base`` with ``child`` merged into it; neither ``base`` nor ``child`` changes.

    ``merge_into({'a': {'x': 2}}, {'a': {'x': 1, 'y': 1}})`` gives ``{'a': {'x': 2, 'y': 1}}``.
    ``key_path`` is where ``child`` sits in the config (``'model'``), for error messages.
    """
    merged = base.copy()
    for key, value in child.items():
        if key == DELETE_KEY:
            continue  # an instruction about this dict, not a value
        indexed = (
            allow_list_keys and isinstance(merged, list) and isinstance(key, str) and key.isdigit()
        )
        slot = _list_index(key, merged) if indexed else key  # an entry merges as a key does
        if not isinstance(value, dict):
            merged[slot] = value
        elif not (indexed or key in merged):
            merged[slot] = _fresh_dict(value)  # nothing to merge into: kept as written (MMEngine)
        elif value.get(DELETE_KEY, False):
            merged[slot] = _fresh_dict(value, drop=DELETE_KEY)
        else:
            inherited = merged[slot]
            allowed = (dict, list) if allow_list_keys else dict
            if not isinstance(inherited, allowed):
                raise merge_conflict(f"{key_path}{key}", value, inherited)
            merged[slot] = merge_into(value, inherited, allow_list_keys, f"{key_path}{key}.")
    return merged


def _list_index(key: str, items: list) -> int:
    index = int(key)
    if index >= len(items):
        raise ConfigKeyError(
            f"index {index} is out of range for a list of {len(items)} items: {items}"
        )
    return index


def merge_conflict(
    key: str,
    value: dict,
    inherited: Any,
    where: str | None = None,
    inherited_from: str | None = None,
) -> MergeTypeError:
    """The error for the dict ``value`` at dotted ``key`` over ``inherited``, which is not a
    dict. ``where`` and ``inherited_from`` (``file:line``) are where a child config sets the
    dict and where its base set the value under it."""
    shown = repr(value)
    shown = shown if len(shown) <= 80 else shown[:72] + " ...}"
    prefix = f"{where}: " if where else ""
    under = "the config's value"
    if where:
        under = "the inherited value" + (f" (from {inherited_from})" if inherited_from else "")
    error = MergeTypeError(
        f"{prefix}{key}={shown} is a dict, but {under} is {inherited!r}, which is not a dict, "
        f"so the two cannot be merged. Add {DELETE_KEY}=True to the dict to replace the "
        f"value instead: {key}=dict({DELETE_KEY}=True, ...)"
    )
    error.key, error.value, error.inherited, error.where = key, value, inherited, where
    return error


def _fresh_dict(value: dict, drop: str | None = None) -> dict:
    # A child dict that replaces (or adds) a key: a new container, so that changing the merged
    # config never reaches the object the child (or a caller of merge_from_dict) holds.
    from .config_dict import ConfigDict

    items = {key: item for key, item in value.items() if key != drop}
    return ConfigDict(items) if isinstance(value, ConfigDict) else items


def nest_dotted_keys(options: dict[str, Any]) -> dict:
    """Turn ``{'a.b.c': 1, 'x.0.y': 2}`` into ``{'a': {'b': {'c': 1}}, 'x': {'0': {'y': 2}}}``."""
    nested: dict = {}
    for dotted, value in options.items():
        *parents, leaf = dotted.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigKeyError(
                    f"option {dotted!r} sets a key below {part!r}, which is given a value"
                )
        node[leaf] = value
    return nested
