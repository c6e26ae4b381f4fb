"""ConfigDict: the dict type of every config value, with attribute access (built on addict).

Each nested ConfigDict remembers where it hangs in the tree, so that a missing key is reported
with its full path and the close matches (``cfg.optim_wrapper has no key 'optimzer'. Did you
mean 'optimizer'?``), and so that builders can name the config key that failed.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from addict import Dict

from runnerx.suggest import SENTENCE, did_you_mean

from .merge import DELETE_KEY

_NO_DEFAULT = object()


class ConfigDict(Dict):
    """A dict with attribute access whose nested dicts are ConfigDicts too.

    ``cfg.model.backbone.depth`` and ``cfg['model']['backbone']['depth']`` are the same value;
    lists and tuples keep their type. A missing key raises ``KeyError`` for item access and
    ``AttributeError`` for attribute access, both naming the path and close matches.
    """

    # (owner ConfigDict, key) where this dict hangs; None at the root of a tree.
    __owner: tuple[ConfigDict, str] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "__frozen", False)
        for arg in args:
            if not arg:
                continue
            items = dict.items(arg) if isinstance(arg, dict) else arg
            for key, value in items:
                self[key] = value
        for key, value in kwargs.items():
            self[key] = value

    def __setitem__(self, name: Any, value: Any) -> None:
        dict.__setitem__(self, name, _adopt(value, self, name))

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name):
            raise AttributeError(
                f"'{name}' is a ConfigDict method and cannot be set as an attribute; "
                f"use item access: cfg[{name!r}] = ..."
            )
        self[name] = value

    def __getattr__(self, name: str) -> Any:
        try:
            return dict.__getitem__(self, name)
        except KeyError:
            raise MissingKeyAttributeError(self, name) from None

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise MissingKeyAttributeError(self, name) from None

    def __missing__(self, name: Any) -> Any:
        raise MissingKeyError(self, name)

    def __copy__(self) -> ConfigDict:
        other = self.__class__()
        for key, value in dict.items(self):
            dict.__setitem__(other, key, value)
        return other

    copy = __copy__

    def __deepcopy__(self, memo: dict) -> ConfigDict:
        other = self.__class__()
        memo[id(self)] = other
        for key, value in dict.items(self):
            other[copy.deepcopy(key, memo)] = copy.deepcopy(value, memo)
        return other

    def __reduce_ex__(self, protocol: Any) -> tuple:
        return (self.__class__, (dict(dict.items(self)),))

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        """The ``(key, value)`` pairs, as a list as in MMEngine: a loop over them may add or
        remove keys (``for k, v in cfg.items(): if v is None: cfg.pop(k)``)."""
        return list(dict.items(self))

    def values(self) -> list[Any]:  # type: ignore[override]
        """The values, as a list as in MMEngine (``cfg.values()[0]`` works)."""
        return list(dict.values(self))

    def pop(self, key: Any, default: Any = None) -> Any:
        """Remove ``key`` and return its value, or ``default`` (None) when absent, as MMEngine."""
        return dict.pop(self, key, default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        """Return ``self[key]``, first setting it to ``default`` when absent."""
        if key not in self:
            self[key] = default
        return dict.__getitem__(self, key)

    def to_dict(self) -> dict:
        """Return the same tree as plain ``dict``, ``list`` and ``tuple`` objects."""
        return to_plain(self)

    def merge(self, other: dict) -> None:
        """Merge ``other`` into this dict in place (MMEngine's ``ConfigDict.merge``): dicts merge
        key by key, ``_delete_=True`` in one replaces the dict below it, anything else (a list
        too) replaces, and so does a dict set over a value that is not one.

        ``optim_wrapper.merge(dict(optimizer=dict(lr=0.01)))`` keeps the optimizer's type.
        """
        merged = _merged(copy.deepcopy(other), self)
        dict.clear(self)
        for key, value in merged.items():
            self[key] = value


def _merged(new: Any, old: Any) -> Any:
    if not isinstance(new, dict):
        return new
    keep = isinstance(old, dict) and not new.get(DELETE_KEY, False)
    merged = dict(dict.items(old)) if keep else {}
    for key, value in new.items():
        if key != DELETE_KEY:
            merged[key] = _merged(value, merged.get(key))
    return merged


def to_plain(value: Any) -> Any:
    """Convert every dict in ``value`` (ConfigDicts included) to a plain ``dict``, recursively."""
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in dict.items(value)}
    if isinstance(value, (list, tuple)):
        return _rebuild_sequence(value, [to_plain(item) for item in value])
    return value


def unshare(cfg: ConfigDict) -> None:
    """Give each key of the tree ``cfg`` its own dicts and lists, as MMEngine's loaded configs
    have: a container met a second time (``test_dataloader = val_dataloader`` in a config
    file, ``c = _base_.pipeline``) is replaced there by a copy, so that changing one key's
    value never changes another's. Other values (classes, numbers) stay shared."""
    _unshared(cfg, None, "", {})


def _unshared(value: Any, owner: ConfigDict | None, key: Any, seen: dict[int, tuple]) -> Any:
    """``value``, a container at ``key`` of ``owner`` (None for the root), with each ConfigDict
    or list in it that ``seen`` holds replaced by a copy; ``seen`` maps the id of each one
    kept to its place."""
    if not isinstance(value, tuple):  # a ConfigDict or a list
        first = seen.get(id(value))
        if first is not None:
            if isinstance(value, ConfigDict):  # it stays where it was first: its owner there
                object.__setattr__(value, "_ConfigDict__owner", first)
            return _adopt(to_plain(value), owner, key)  # new containers, hung here
        seen[id(value)] = (owner, key)
    if isinstance(value, ConfigDict):
        for item_key, item in dict.items(value):  # replacing values keeps the keys: safe
            if isinstance(item, _CONTAINERS):
                new = _unshared(item, value, item_key, seen)
                if new is not item:
                    dict.__setitem__(value, item_key, new)
        return value
    changed = None  # a list or tuple: a tuple is immutable, but not what it holds
    for index, item in enumerate(value):
        if isinstance(item, _CONTAINERS):
            new = _unshared(item, owner, f"{key}.{index}", seen)
            if new is not item:
                changed = changed or list(value)
                changed[index] = new
    if changed is None:
        return value
    if isinstance(value, tuple):
        return _rebuild_sequence(value, changed)
    value[:] = changed
    return value


_CONTAINERS = (ConfigDict, list, tuple)


def config_key_path(cfg: Any) -> str | None:
    """Dotted path of a ConfigDict inside its tree (``'model.backbone'``).

    Returns ``''`` for the root of a tree and ``None`` for anything that is not a ConfigDict.
    """
    if not isinstance(cfg, ConfigDict):
        return None
    parts: list[str] = []
    node = cfg
    while (owner := node._ConfigDict__owner) is not None and len(parts) < 1000:
        node, key = owner
        parts.append(str(key))
    return ".".join(reversed(parts))


def keyed_copy(cfg: Mapping[str, Any], key: str) -> ConfigDict:
    """A shallow copy of ``cfg`` that errors while building it name as the config key
    ``key`` (``cfg.train_cfg``), wherever it came from: for the builders that take a dict
    apart before they build it."""
    copied = cfg.copy() if isinstance(cfg, ConfigDict) else ConfigDict(cfg)
    return ConfigDict({key: copied})[key]


def with_config_key(cfg: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``cfg`` as a config whose build errors name it ``cfg.{key}``: a plain dict, or a
    ConfigDict on its own, gets a :func:`keyed_copy`; a ConfigDict in a config tree keeps its
    own path (a config from a file knows where it is)."""
    return cfg if config_key_path(cfg) else keyed_copy(cfg, key)


def _adopt(value: Any, owner: ConfigDict, key: Any) -> Any:
    """Turn plain dicts in ``value`` into ConfigDicts and record where they hang."""
    kind = type(value)
    if kind is dict or kind is OrderedDict:
        value = ConfigDict(value)
    elif kind is list or kind is tuple or isinstance(value, (list, tuple)):
        items = [_adopt(item, owner, f"{key}.{index}") for index, item in enumerate(value)]
        return _rebuild_sequence(value, items)
    elif not isinstance(value, ConfigDict):
        return value
    object.__setattr__(value, "_ConfigDict__owner", (owner, key))
    return value


def _rebuild_sequence(original: list | tuple, items: list) -> list | tuple:
    kind = type(original)
    if kind is list:
        return items
    if hasattr(original, "_fields"):  # a namedtuple takes its fields positionally
        return kind(*items)
    return kind(items)


class _MissingKey:
    """Shared message of the two missing-key errors, built only when it is shown."""

    def __init__(self, cfg: ConfigDict, name: Any) -> None:
        super().__init__(name)
        self.cfg = cfg
        self.key = name

    def __str__(self) -> str:
        path = config_key_path(self.cfg)
        where = "config" if path is None else ("cfg" if path == "" else f"cfg.{path}")
        keys = [str(key) for key in self.cfg]
        message = f"{where} has no key {self.key!r}."
        if isinstance(self.key, str):
            message += did_you_mean(self.key, keys, n=3, form=SENTENCE)
        shown = ", ".join(keys[:20]) + (", ..." if len(keys) > 20 else "")
        return message + (f" Keys there: {shown}." if keys else " It is empty.")


class MissingKeyError(_MissingKey, KeyError):
    """``cfg['missing']``: a KeyError that names the key path and close matches."""


class MissingKeyAttributeError(_MissingKey, AttributeError):
    """``cfg.missing``: an AttributeError that names the key path and close matches."""
