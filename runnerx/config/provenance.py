"""Where did this value come from? The chain of files, lines and options that set a key.

``Config.explain('optim_wrapper.optimizer.lr')`` reads the files of the config tree again, in
the order they merge, and lists every assignment that set the key, replaced one of its parents
as a whole, or set a part of it; then the command-line options that did. The last one listed
is the one in force.
"""

from __future__ import annotations

import ast
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigKeyError
from .merge import DELETE_KEY
from .pretty import format_config
from .source import SourceFile
from .yaml_text import load_yaml


@dataclass(frozen=True)
class Override:
    """A value set after loading, e.g. by ``--cfg-options key=value``."""

    key: str
    value: Any
    source: str


@dataclass(frozen=True)
class Origin:
    """One place that set the explained key, or a parent or part of it."""

    where: str  # "file:line", or the source of an override such as "--cfg-options"
    key: str  # the dotted key that place sets
    code: str  # what it says there
    relation: str  # "sets", "replaces" (a parent as a whole) or "part" (something below)
    merges: bool = False  # a dict merged key by key into what came before, not a replacement


@dataclass
class Explanation:
    """The value at a key and the places that set it, in the order they were applied."""

    key: str
    value: Any
    origins: list[Origin] = field(default_factory=list)
    from_file: bool = True

    def __str__(self) -> str:
        shown = format_config({"value": self.value}).rstrip("\n")
        lines = [self.key + shown[len("value") :], ""]
        if not self.origins:
            lines.append(
                "No assignment to it was found in the config files; it may be computed by code "
                "in a config (a loop or a function)."
                if self.from_file
                else "This config was not read from a file and no option changed this key."
            )
            return "\n".join(lines)
        lines.append("Set by, in the order applied (the last one is in force):")
        width = max(len(origin.where) for origin in self.origins)
        last_full = None
        for number, origin in enumerate(self.origins, start=1):
            note = ""
            if origin.relation == "replaces":
                note = f"  [replaces all of {origin.key}]"
            elif origin.relation == "part":
                note = f"  [sets {origin.key}]"
            if origin.relation != "part":
                if last_full is not None:
                    verb = "merged into" if origin.merges else "overrides"
                    note += f"  ({verb} {last_full})"
                last_full = number
            lines.append(f"  {number}. {origin.where.ljust(width)}  {origin.code}{note}")
        return "\n".join(lines)


def explain(
    cfg: dict, key: str, source: SourceFile | None, overrides: list[Override]
) -> Explanation:
    """Explain where ``cfg``'s value at dotted ``key`` came from."""
    parts = tuple(key.split("."))
    value = _value_at(cfg, parts)
    origins = list(_origins_in_tree(source, parts)) if source is not None else []
    for override in overrides:
        path = tuple(override.key.split("."))
        relation = _relation(parts, path, whole=True)
        if relation:
            code = f"{override.key}={override.value!r}"
            origins.append(Origin(override.source, override.key, code, relation, merges=False))
    return Explanation(key, value, origins, from_file=source is not None)


def where_set(file: SourceFile, key: str, inherited: bool = False) -> str | None:
    """``'file:line'`` (``'file'`` where lines are unknown) of the last assignment to dotted
    ``key``, or to a parent of it as a whole, in ``file`` itself, or with ``inherited`` in the
    files it inherits; None where no assignment is found (a value computed in a loop)."""
    parts = tuple(key.split("."))
    if inherited:
        origins: Iterator[Origin] = _origins_in_tree(file, parts, own=False)
    else:
        origins = (
            origin
            for statement in _statements(file)
            for origin in _origins_of_statement(file.path, statement, parts)
        )
    placed = [origin.where for origin in origins if origin.relation != "part"]
    return placed[-1] if placed else None


def _origins_in_tree(
    file: SourceFile, parts: tuple[str, ...], own: bool = True
) -> Iterator[Origin]:
    """The places in ``file`` (unless not ``own``) and the files it inherits that set
    ``parts``, in the order applied; a file that ``with read_base():`` imports is followed for
    the names taken from it, under the name it has there."""
    for base in file.bases:
        if base.imported_as is None:
            yield from _origins_in_tree(base, parts)
        elif parts[0] in base.imported_as:
            yield from _origins_in_tree(base, (base.imported_as[parts[0]], *parts[1:]))
    for statement in _statements(file) if own else ():
        yield from _origins_of_statement(file.path, statement, parts)


def _origins_of_statement(path: str, statement: list[Assignment], wanted: tuple) -> list[Origin]:
    """One line per statement: its deepest assignment to the key or a parent, else the
    outermost parts of the key it sets."""
    found = []
    for key_path, line, code, whole in statement:
        relation = _relation(wanted, key_path, whole)
        if relation:
            where = f"{_shown(path)}:{line}" if line else _shown(path)
            found.append((key_path, Origin(where, ".".join(key_path), code, relation, not whole)))
    covering = [item for item in found if item[1].relation != "part"]
    if covering:
        return [max(covering, key=lambda item: len(item[0]))[1]]
    outermost = []
    for key_path, origin in found:
        if not any(key_path[: len(other)] == other for other, _ in outermost):
            outermost.append((key_path, origin))
    return [origin for _, origin in outermost]


def _relation(wanted: tuple, path: tuple, whole: bool) -> str | None:
    if path == wanted:
        return "sets"
    if wanted[: len(path)] == path:
        return "replaces" if whole else None
    if path[: len(wanted)] == wanted:
        return "part"
    return None


def _value_at(cfg: Any, parts: tuple[str, ...]) -> Any:
    node = cfg
    for depth, part in enumerate(parts):
        if isinstance(node, (list, tuple)):
            if not part.isdigit() or int(part) >= len(node):
                where = ".".join(parts[:depth])
                raise ConfigKeyError(
                    f"{where} is a list of {len(node)} items; {part!r} is no index of it"
                )
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node[part]
        else:
            where = ".".join(parts[:depth])
            raise ConfigKeyError(f"{where} is {node!r}, which has no key {part!r}")
    return node


def _shown(path: str) -> str:
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


Assignment = tuple[tuple[str, ...], "int | None", str, bool]


def _statements(file: SourceFile) -> Iterator[list[Assignment]]:
    """For each statement of a file, its (key path, line, code, replaces-all-below) tuples."""
    if file.path.endswith(".py"):
        yield from _python_statements(file.run_text, replaces=file.read_base)
        return
    if file.path.endswith(".json"):
        data = json.loads(file.run_text)
    else:
        data = load_yaml(file.run_text, file.path) or {}
    data.pop("_base_", None)
    for key, value in data.items():
        yield list(_data_assignments(value, (str(key),)))


def _data_assignments(data: Any, path: tuple) -> Iterator[Assignment]:
    is_dict = isinstance(data, dict)
    whole = not is_dict or bool(data.get(DELETE_KEY))
    yield path, None, f"{path[-1]}: {_short(repr(data))}", whole
    if is_dict:
        for key, value in data.items():
            if key != DELETE_KEY:
                yield from _data_assignments(value, (*path, str(key)))


def _python_statements(text: str, replaces: bool = False) -> Iterator[list[Assignment]]:
    """``replaces``: each assignment replaces the value it sets, even a dict (a read_base-style
    file, where nothing merges)."""
    for statement in ast.parse(text).body:
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and statement.value:
            targets, value = [statement.target], statement.value
        else:
            continue
        assignments: list[Assignment] = []
        for target in targets:
            path = _target_path(target)
            if not path or path == ("_base_",):
                continue
            if path[0] == "_base_":  # an in-place edit of an inherited value
                path = path[1:]
            code = _short(_segment(text, statement))
            assignments.extend(
                _value_assignments(text, path, value, statement.lineno, code, replaces)
            )
        yield assignments


def _value_assignments(
    text: str, path: tuple, node: ast.expr, line: int, code: str, whole: bool = False
) -> Iterator[Assignment]:
    items = _dict_items(node, text)
    replaces = (
        whole
        or items is None
        or any(
            key == DELETE_KEY and isinstance(item, ast.Constant) and item.value
            for key, item, _ in items
        )
    )
    yield path, line, code, replaces
    if items is not None:
        for key, item, shown in items:
            if key != DELETE_KEY:
                yield from _value_assignments(text, (*path, key), item, item.lineno, shown)
    elif isinstance(node, (ast.List, ast.Tuple)):
        for index, element in enumerate(node.elts):
            shown = _short(_segment(text, element))
            yield from _value_assignments(text, (*path, str(index)), element, element.lineno, shown)


def _dict_items(node: ast.expr, text: str) -> list[tuple[str, ast.expr, str]] | None:
    """The (key, value node, code) of a ``dict(...)`` call or ``{...}`` literal, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        if node.args or any(keyword.arg is None for keyword in node.keywords):
            return None  # dict(other, ...) or dict(**other): contents not visible here
        return [
            (keyword.arg, keyword.value, _short(_segment(text, keyword)))
            for keyword in node.keywords
        ]
    if isinstance(node, ast.Dict):
        items = []
        for key, value in zip(node.keys, node.values):
            if not isinstance(key, ast.Constant):
                return None
            shown = f"{_segment(text, key)}: {_segment(text, value)}"
            items.append((str(key.value), value, _short(shown)))
        return items
    return None


def _segment(text: str, node: ast.AST) -> str:
    return ast.get_source_segment(text, node) or ast.unparse(node)


def _target_path(target: ast.expr) -> tuple[str, ...] | None:
    if isinstance(target, ast.Name):
        return (target.id,)
    if isinstance(target, ast.Attribute):
        parent = _target_path(target.value)
        return None if parent is None else (*parent, target.attr)
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        parent = _target_path(target.value)
        return None if parent is None else (*parent, str(target.slice.value))
    return None


def _short(code: str, limit: int = 90) -> str:
    first = code.strip().splitlines()[0] if code.strip() else code
    if len(first) > limit or first != code.strip():
        return first[: limit - 4].rstrip() + " ..."
    return first
