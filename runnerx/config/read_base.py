"""MMEngine's pure-Python config style (``with read_base():``), which runnerx does not support:
such a file is refused, before it runs, with a message that says which ``_base_`` line
inherits the same files."""

from __future__ import annotations

import ast

from .errors import ConfigError

#: the modules a config imports ``read_base`` from
_READ_BASE_MODULES = ("mmengine", "mmengine.config", "runnerx", "runnerx.config")


def unsupported(what: str, bases: list[str] | None = None) -> str:
    """The message for a use of the pure-Python config style; ``bases``, when known, are the
    files it inherits, for the ``_base_`` line that does the same."""
    line = f"_base_ = {bases!r}" if bases else "_base_ = [...]"
    return (
        f"{what} (MMEngine's pure-Python config style) is not supported; inherit with "
        f"{line} instead (see docs/config.md)"
    )


def read_base() -> None:
    """MMEngine's ``read_base``, so that ``from runnerx.config import read_base`` imports;
    using it raises :class:`ConfigError`, as runnerx configs inherit with ``_base_``."""
    raise ConfigError(unsupported("`with read_base():`"))


def refuse_read_base(tree: ast.Module, path: str) -> None:
    """Raise :class:`ConfigError` naming ``path:line`` if the parsed config uses
    ``with read_base():`` or imports ``read_base``."""
    imported_at = None
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and any(_calls_read_base(item) for item in node.items):
            bases = [_base_path(statement) for statement in node.body]
            message = unsupported("`with read_base():`", None if None in bases else bases)
            raise ConfigError(f"{path}:{node.lineno}: {message}")
        if (
            imported_at is None
            and isinstance(node, ast.ImportFrom)
            and node.module in _READ_BASE_MODULES
            and any(alias.name == "read_base" for alias in node.names)
        ):
            imported_at = node.lineno
    if imported_at is not None:
        raise ConfigError(f"{path}:{imported_at}: {unsupported('importing `read_base`')}")


def _calls_read_base(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call):
        return False
    function = call.func
    name = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    return name == "read_base"


def _base_path(statement: ast.stmt) -> str | None:
    """``from ..models.resnet import *`` -> ``'../models/resnet.py'``; None for anything else."""
    if not isinstance(statement, ast.ImportFrom) or not statement.level or not statement.module:
        return None
    folder = "./" if statement.level == 1 else "../" * (statement.level - 1)
    return folder + statement.module.replace(".", "/") + ".py"
