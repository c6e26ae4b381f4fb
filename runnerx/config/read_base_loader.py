"""Reading a config written in MMEngine's pure-Python style (``with read_base():``).

Each base file that a ``with read_base():`` block imports is read by the same rules
(recursively); the names the import asks for (all of them for ``*``) become variables of the
importing file, dicts as ConfigDicts, before the rest of the file runs as Python. Each
importing file reads its bases afresh, so two files that import one base get independent
values.

Unlike MMEngine nothing is lazy: the file's other imports (``from torch.optim import SGD``)
run when the file is read, and a class stays a class in the config; an import from
``mmengine`` takes runnerx's object of that path (:mod:`runnerx.config.mmengine_imports`).
The config is the file's top-level names once it has run, less the names bound by imports,
modules and functions.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runnerx.suggest import SENTENCE, did_you_mean

from .config_dict import ConfigDict
from .errors import InheritanceCycleError, MissingBaseVariableError
from .read_base import BaseImport, find_base_imports, module_file, names_bound_by_imports
from .source import SourceFile, config_values, parse_python, run_config_code

#: ``read(path, chain) -> (absolute path, file text, text after {{ }} substitution)``; it
#: raises for a missing file and for a path already in ``chain``
ReadText = Callable[[str, tuple[str, ...]], tuple[str, str, str]]


@dataclass
class ConfigModule:
    """A read_base-style config file after it ran: the names a file importing it may take."""

    namespace: dict[str, Any]  # its top-level names, dunder names left out
    imported: set[str]  # those bound by imports: not config values
    source: SourceFile

    def config(self) -> dict:
        """Its config values."""
        return config_values(self.namespace, self.imported)


def load_read_base_config(
    read: ReadText,
    path: str,
    text: tuple[str, str],
    tree: ast.Module,
    imports: list[BaseImport],
    chain: tuple[str, ...],
) -> ConfigModule:
    """Read the bases that ``imports`` name, then run the config at ``path``.

    ``text`` is its (raw, substituted) text, ``tree`` the substituted text parsed, with the
    read_base blocks already taken out (by :func:`find_base_imports`), and ``chain`` the
    files importing it, outermost first.
    """
    source = SourceFile(path, *text, read_base=True)
    namespace: dict[str, Any] = {}
    imported: set[str] = set()
    bases: dict[str, ConfigModule] = {}
    for base_import in imports:
        file = module_file(base_import, path)
        if file not in bases:
            bases[file] = _load_base(read, file, base_import, path, chain)
            source.bases.append(bases[file].source)
        _bind(base_import, bases[file], namespace, imported, path)
    imported |= names_bound_by_imports(tree, path)
    run_config_code(tree, path, namespace)
    names = {key: value for key, value in namespace.items() if not key.startswith("__")}
    return ConfigModule(names, imported, source)


def _load_base(
    read: ReadText, file: str, base_import: BaseImport, importer: str, chain: tuple[str, ...]
) -> ConfigModule:
    chain = (*chain, importer)
    if file in chain:
        loop = " -> ".join((*chain[chain.index(file) :], file))
        raise InheritanceCycleError(
            f"{importer}:{base_import.line}: config files import each other in a loop: {loop}"
        )
    path, raw, text = read(file, chain)
    tree = parse_python(text, path)
    imports = find_base_imports(tree, path, lazy_import=True) or []  # a list when True
    base = load_read_base_config(read, path, (raw, text), tree, imports, chain)
    base.namespace = {name: _as_config(value) for name, value in base.namespace.items()}
    return base


def _bind(
    base_import: BaseImport,
    base: ConfigModule,
    namespace: dict[str, Any],
    imported: set[str],
    importer: str,
) -> None:
    names = base_import.names or tuple((name, name) for name in base.namespace)
    if base.source.imported_as is None:
        base.source.imported_as = {}
    for name, bound_as in names:
        if name not in base.namespace:
            hint = did_you_mean(name, base.namespace, n=3, form=SENTENCE)
            has = ", ".join(base.namespace) or "none"
            raise MissingBaseVariableError(
                f"{importer}:{base_import.line}: base config {base.source.path} has no "
                f"variable {name!r}.{hint} Its variables: {has}."
            )
        namespace[bound_as] = base.namespace[name]
        base.source.imported_as[bound_as] = name
        if name in base.imported:
            imported.add(bound_as)
        else:
            imported.discard(bound_as)


def _as_config(value: Any) -> Any:
    """A base's value as files importing it see it: dicts (in lists too) as new ConfigDicts,
    so that two names bound to one dict there are two dicts here, as in MMEngine."""
    if isinstance(value, dict):
        return ConfigDict({key: _as_config(item) for key, item in dict.items(value)})
    if type(value) in (list, tuple):
        return type(value)(_as_config(item) for item in value)
    return value
