"""One file of a config tree, and running a ``.py`` config file's code.

Shared by the two ways a config inherits: ``_base_ = [...]`` (:mod:`runnerx.config.loader`)
and ``with read_base():`` (:mod:`runnerx.config.read_base_loader`).
"""

from __future__ import annotations

import ast
import importlib.util
import types
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigSyntaxError, config_raised
from .mmengine_imports import CONFIG_BUILTINS

#: values that are not config values: a config's helper functions and the modules it imports
DROPPED_TYPES = (types.FunctionType, types.ModuleType)
#: the name a ``_base_``-style config inherits through
BASE_KEY = "_base_"
#: the suffixes of the config files that can be read
SUPPORTED_SUFFIXES = (".py", ".json", ".yaml", ".yml")


def assigns_base(statement: ast.stmt) -> bool:
    """Whether a top-level statement is ``_base_ = ...``."""
    return isinstance(statement, ast.Assign) and any(
        isinstance(target, ast.Name) and target.id == BASE_KEY for target in statement.targets
    )


@dataclass
class SourceFile:
    """One file of a config tree: where it is, its text, and the files it inherits, in order.

    ``imported_as`` is set on a file that a ``with read_base():`` block imports: which of its
    variables the importing file took, as ``{name there: name here}``. ``read_base`` marks a
    file read in that style, where an assignment replaces a value instead of merging into it.
    """

    path: str
    text: str
    run_text: str
    bases: list[SourceFile] = field(default_factory=list)
    scope: str | None = None
    imported_as: dict[str, str] | None = None
    read_base: bool = False

    def in_merge_order(self) -> list[SourceFile]:
        """All files of the tree, each after the bases it inherits (the order they merge in)."""
        ordered = [file for base in self.bases for file in base.in_merge_order()]
        return [*ordered, self]


def parse_python(text: str, path: str) -> ast.Module:
    """Parse config source, turning a SyntaxError into one that names the file and line."""
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as error:
        raise ConfigSyntaxError(path, error) from None


def run_config_code(tree: ast.Module, path: str, namespace: dict[str, Any]) -> None:
    """Run a parsed config in ``namespace``; an error it raises names ``path:line``.

    ``__file__`` is the config's path, as in MMEngine's ``with read_base():`` style (its
    ``_base_`` style runs a temporary copy, so there ``__file__`` names the copy). An import
    from ``mmengine`` takes runnerx's object of that path (see
    :mod:`runnerx.config.mmengine_imports`)."""
    namespace.setdefault("__file__", path)
    namespace.setdefault("__builtins__", CONFIG_BUILTINS)
    code = compile(tree, path, "exec")
    try:
        exec(code, namespace)
    except Exception as error:
        line = _line_in_traceback(error, path)
        message = f"{path}:{line}: the config raised {type(error).__name__}: {error}"
        if isinstance(error, ModuleNotFoundError):
            message += _missing_module_hint(tree, line, error.name)
        raise config_raised(message, error) from error


def config_values(namespace: dict[str, Any], left_out: set[str] | frozenset = frozenset()) -> dict:
    """The config values among a config file's top-level names: not dunder names, modules,
    functions or the names in ``left_out``."""
    return {
        key: value
        for key, value in namespace.items()
        if not key.startswith("__") and key not in left_out and not isinstance(value, DROPPED_TYPES)
    }


def _missing_module_hint(tree: ast.Module, line: int | str, missing: str | None) -> str:
    """What to do when an import statement of the config, at ``line``, fails for want of the
    module ``missing``: runnerx runs a config's imports as it reads the file, where MMEngine
    defers them until a value is built, so the package must be installed even to print the
    config. Nothing when the statement at ``line`` is no import."""
    statement = next(
        (
            node
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            and node.lineno <= (line if isinstance(line, int) else -1) <= (node.end_lineno or 0)
        ),
        None,
    )
    if statement is None or not missing:
        return ""
    package = missing.partition(".")[0]
    spec = importlib.util.find_spec(package)
    if spec is not None and spec.origin not in (None, "namespace"):
        return (
            f"; {package!r} is installed ({spec.origin}) but has no module {missing!r}: check "
            "the name, or the package's version"
        )
    if isinstance(statement, ast.ImportFrom) and statement.names[0].name != "*":
        name = statement.names[0].name
        strings = f"type='{statement.module}.{name}' in place of type={name}"
    else:
        strings = f"type='{package}.<module>.<Class>' in place of the imported class"
    return (
        f". This config imports from the package {package!r}, which is not installed. runnerx "
        "runs a config's imports when it reads the file (MMEngine defers them until a value is "
        f"built), so {package!r} must be installed to load this config, even to print it: "
        f"install it, or replace the import by strings ({strings})"
    )


def _line_in_traceback(error: BaseException, path: str) -> int | str:
    line: int | str = "?"
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == path:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line
