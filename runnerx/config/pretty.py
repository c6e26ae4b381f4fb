"""Write a config dict as readable Python source that loads back to an equal dict.

``format_config`` backs ``Config.pretty_text`` and ``Config.dump('x.py')``. The output looks like
a hand-written config::

    model = dict(
        type='ImageClassifier',
        backbone=dict(type='ResNet', depth=50, out_indices=(3,), style='pytorch'),
        head=dict(type='LinearClsHead', num_classes=1000, topk=(1, 5)))

A value stays on one line when it fits in 79 columns; otherwise its items go one per line.
The text depends only on the value, so formatting the loaded-back result gives the same text.
"""

from __future__ import annotations

import keyword
import math
import sys
import types
from collections.abc import Mapping
from typing import Any

__all__ = ["format_config", "object_path"]

MAX_WIDTH = 79
INDENT = 4

# Names the generated source relies on. A top-level key with one of these names would shadow
# the builtin for every later line, so such keys are written together in one final statement.
_CALLED_NAMES = frozenset(
    {"dict", "set", "frozenset", "float", "complex", "globals", "__builtins__"}
)


class _Node:
    """One formatted value: its one-line text and, for a non-empty container, its items."""

    __slots__ = ("closer", "flat", "items", "opener", "single")

    def __init__(
        self,
        flat: str,
        opener: str = "",
        closer: str = "",
        items: list[tuple[str, _Node]] | None = None,
        single: bool = False,
    ) -> None:
        self.flat = flat
        self.opener = opener
        self.closer = closer
        self.items = items  # (prefix such as "key=", child) pairs; None for a scalar
        self.single = single  # a one-element tuple, which needs its trailing comma


def format_config(cfg: Mapping[str, Any]) -> str:
    """Return Python source that, executed as a config file, defines exactly ``cfg``'s keys.

    Each top-level key becomes one assignment (``globals()['a-b'] = ...`` for a key that is not
    an identifier). Classes and functions are written as their dotted import path string
    (``'torch.optim.sgd.SGD'``); any other object raises ``TypeError`` naming its key path.
    """
    lines: list[str] = []
    shadowing = {}
    for key, value in cfg.items():
        if key in _CALLED_NAMES:
            shadowing[key] = value
            continue
        if _is_kwarg_name(key):
            prefix = f"{key} = "
        else:
            prefix = f"globals()[{_build(key, (), set()).flat}] = "
        _emit(lines, prefix, _build(value, (key,), set()), "")
    if shadowing:
        # One call: its arguments are all evaluated before any of these names is rebound.
        items = [(f"{k}=", _build(v, (k,), set())) for k, v in shadowing.items()]
        _emit(lines, "", _finish("globals().update(", ")", items), "")
    return "\n".join(lines) + "\n" if lines else ""


def _emit(lines: list[str], prefix: str, node: _Node, suffix: str) -> None:
    block = _layout(node, len(prefix), 0, len(suffix))
    block[0] = prefix + block[0]
    block[-1] += suffix
    lines.extend(block)


def _layout(node: _Node, col: int, indent: int, tail: int) -> list[str]:
    """Lines for ``node`` whose first line starts at column ``col`` and is followed by
    ``tail`` characters on its last line; continuation lines carry their own indentation."""
    if node.items is None or col + len(node.flat) + tail <= MAX_WIDTH:
        return [node.flat]
    lines = [node.opener]
    inner = indent + INDENT
    pad = " " * inner
    last = len(node.items) - 1
    end = ("," if node.single else "") + node.closer
    for i, (prefix, child) in enumerate(node.items):
        suffix = end if i == last else ","
        child_tail = len(suffix) + (tail if i == last else 0)
        block = _layout(child, inner + len(prefix), inner, child_tail)
        block[0] = pad + prefix + block[0]
        block[-1] += suffix
        lines.extend(block)
    return lines


def _is_kwarg_name(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def _build(value: Any, path: tuple, active: set[int]) -> _Node:
    """Format ``value`` (found at key ``path``) into a node; ``active`` holds the ids of the
    containers being formatted, to catch a value that contains itself."""
    # bool before int: bool is an int subclass.
    if value is None or isinstance(value, bool):
        return _Node(repr(value))
    if isinstance(value, int):
        return _Node(int.__repr__(value))
    if isinstance(value, float):
        return _Node(_float_text(value))
    if isinstance(value, complex):
        return _Node(f"complex({_float_text(value.real)}, {_float_text(value.imag)})")
    if isinstance(value, str):
        return _Node(str.__repr__(value))
    if isinstance(value, bytes):
        return _Node(bytes.__repr__(value))
    if isinstance(value, (Mapping, list, tuple, set, frozenset)):
        if id(value) in active:
            raise ValueError(f"config value at {_path_text(path)} contains itself")
        active.add(id(value))
        try:
            return _build_container(value, path, active)
        finally:
            active.discard(id(value))
    return _Node(str.__repr__(_dotted_path(value, path)))


def _build_container(value: Any, path: tuple, active: set[int]) -> _Node:
    if isinstance(value, Mapping):
        return _build_mapping(value, path, active)
    if isinstance(value, list):
        opener, closer, empty = "[", "]", "[]"
        elements = list(value)
    elif isinstance(value, tuple):
        opener, closer, empty = "(", ")", "()"
        elements = list(value)
    else:
        if isinstance(value, frozenset):
            opener, closer, empty = "frozenset({", "})", "frozenset()"
        else:
            opener, closer, empty = "{", "}", "set()"
        elements = list(value)
    if not elements:
        return _Node(empty)
    is_set = isinstance(value, (set, frozenset))
    items = [
        ("", _build(v, path if is_set else (*path, i), active)) for i, v in enumerate(elements)
    ]
    if is_set:
        # A set's iteration order can differ between runs; sort so the text is stable.
        try:
            order = sorted(range(len(elements)), key=elements.__getitem__)
            items = [items[i] for i in order]
        except TypeError:
            items.sort(key=lambda item: item[1].flat)
    return _finish(opener, closer, items, single=isinstance(value, tuple) and len(items) == 1)


def _build_mapping(value: Mapping, path: tuple, active: set[int]) -> _Node:
    if not value:
        return _Node("dict()")
    if all(map(_is_kwarg_name, value)):
        items = [(f"{k}=", _build(v, (*path, k), active)) for k, v in value.items()]
        return _finish("dict(", ")", items)
    items = [
        (f"{_build(k, path, active).flat}: ", _build(v, (*path, k), active))
        for k, v in value.items()
    ]
    return _finish("{", "}", items)


def _finish(
    opener: str, closer: str, items: list[tuple[str, _Node]], single: bool = False
) -> _Node:
    body = ", ".join(prefix + child.flat for prefix, child in items)
    flat = opener + body + ("," if single else "") + closer
    return _Node(flat, opener, closer, items, single)


def _float_text(value: float) -> str:
    if math.isfinite(value):
        return float.__repr__(value)
    if math.isnan(value):
        return "float('nan')"
    return "float('inf')" if value > 0 else "float('-inf')"


def object_path(value: Any) -> str:
    """The dotted import path of a module-level class, function or module.

    ``object_path(torch.optim.SGD) == 'torch.optim.sgd.SGD'``; a registry can resolve the
    string again. Raises ``TypeError`` for anything without such a path (a lambda, a local
    class, an instance), so it also serves as ``json.dumps(..., default=object_path)``.
    """
    path = _find_object_path(value)
    if path is None:
        raise TypeError(f"{_describe(value)} has no importable dotted path")
    return path


def _find_object_path(value: Any) -> str | None:
    if isinstance(value, types.ModuleType):
        name = value.__name__
        return name if sys.modules.get(name) is value else None
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if not (isinstance(module, str) and isinstance(qualname, str)):
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    # A bound classmethod is a new object on each lookup but compares equal.
    if found is value or (isinstance(value, types.MethodType) and found == value):
        return f"{module}.{qualname}"
    return None


def _dotted_path(value: Any, path: tuple) -> str:
    found = _find_object_path(value)
    if found is not None:
        return found
    raise TypeError(
        f"cannot write config value at {_path_text(path)} as Python: {_describe(value)} has no "
        "importable dotted path; use a plain value or a module-level class or function"
    )


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    kind = type(value)
    return f"a {kind.__module__}.{kind.__qualname__} ({text})"


def _path_text(path: tuple) -> str:
    text = ""
    for part in path:
        if isinstance(part, str) and part.isidentifier():
            text += f".{part}" if text else part
        else:
            text += f"[{part!r}]"
    return text or "<root>"
