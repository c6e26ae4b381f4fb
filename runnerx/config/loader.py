"""Reading a config file, and everything it inherits through ``_base_``, into one dict.

A ``.py`` config runs as Python with ``_base_`` bound to the merged inherited config, so a file
may read (``_base_.model.backbone``) and change (``_base_.train_pipeline[1]['scale'] = ...``)
what it inherits; then its own top-level names are merged over the inherited ones (see
:mod:`runnerx.config.merge`). ``.json`` and ``.yaml`` files inherit the same way.
"""

from __future__ import annotations

import ast
import json
import os
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

from .config_dict import ConfigDict
from .errors import (
    ConfigError,
    ConfigFileNotFoundError,
    ConfigFormatError,
    ConfigSyntaxError,
    DuplicateBaseKeyError,
    InheritanceCycleError,
    config_raised,
)
from .external import resolve_base_path
from .merge import merge_into
from .read_base import refuse_read_base
from .templates import fill_base_references, hide_base_references, substitute_file_and_env_vars

BASE_KEY = "_base_"
DEPRECATION_KEY = "_deprecation_"
SUPPORTED_SUFFIXES = (".py", ".json", ".yaml", ".yml")
_DROPPED_TYPES = (types.FunctionType, types.ModuleType)


@dataclass
class SourceFile:
    """One file of a config tree: where it is, its text, and the files it inherits, in order."""

    path: str
    text: str
    run_text: str
    bases: list[SourceFile] = field(default_factory=list)
    scope: str | None = None

    def in_merge_order(self) -> list[SourceFile]:
        """All files of the tree, each after the bases it inherits (the order they merge in)."""
        ordered = [file for base in self.bases for file in base.in_merge_order()]
        return [*ordered, self]


@dataclass
class LoadedConfig:
    """The result of reading a config tree."""

    cfg: dict
    source: SourceFile
    env_variables: dict[str, str]


def load_config_file(
    path: str, use_predefined_variables: bool = True, use_environment_variables: bool = True
) -> LoadedConfig:
    """Read ``path`` and its bases into a plain dict (values may include ConfigDicts)."""
    loader = _Loader(use_predefined_variables, use_environment_variables)
    cfg, source = loader.load(os.fspath(path), chain=())
    return LoadedConfig(cfg, source, loader.env_variables)


def parse_python(text: str, path: str) -> ast.Module:
    """Parse config source, turning a SyntaxError into one that names the file and line."""
    try:
        return ast.parse(text, filename=path)
    except SyntaxError as error:
        raise ConfigSyntaxError(path, error) from None


class _Loader:
    def __init__(self, use_predefined_variables: bool, use_environment_variables: bool) -> None:
        self.file_vars = use_predefined_variables
        self.env_vars = use_environment_variables
        self.env_variables: dict[str, str] = {}

    def load(self, path: str, chain: tuple[str, ...]) -> tuple[dict, SourceFile]:
        path = os.path.abspath(os.path.expanduser(path))
        if path in chain:
            loop = " -> ".join((*chain[chain.index(path) :], path))
            raise InheritanceCycleError(f"config files inherit from each other in a loop: {loop}")
        suffix = os.path.splitext(path)[1]
        if suffix not in SUPPORTED_SUFFIXES:
            raise ConfigFormatError(f"{path}: a config file must end in .py, .json, .yaml or .yml")
        try:
            with open(path, encoding="utf-8") as file:
                raw = file.read()
        except FileNotFoundError:
            raise ConfigFileNotFoundError(f"config file not found: {path}") from None

        text = raw
        if self.file_vars or self.env_vars:
            text = substitute_file_and_env_vars(
                text, path, self.env_variables, self.file_vars, self.env_vars
            )
        text, placeholders = hide_base_references(text)

        tree = data = None
        if suffix == ".py":
            tree = parse_python(text, path)
            refuse_read_base(tree, path)
            base_specs, base_line = _base_specs_in_python(tree, path)
        else:
            data = _load_data(text, suffix, path)
            base_specs, base_line = data.pop(BASE_KEY, []), None
        specs = _as_spec_list(base_specs, path, base_line)
        base, base_sources = self._load_bases(specs, path, base_line, (*chain, path))

        if tree is not None:
            cfg, base = _run_python(tree, path, base, uses_base=_mentions_base(text, len(specs)))
        else:
            cfg = data
        _warn_if_deprecated(cfg, path)
        if placeholders:
            fill_base_references(cfg, placeholders, base, path)
        merged = merge_into(cfg, base)
        merged = {key: value for key, value in merged.items() if not key.startswith("__")}
        return merged, SourceFile(path, raw, text, base_sources)

    def _load_bases(
        self, specs: list[str], path: str, line: int | None, chain: tuple[str, ...]
    ) -> tuple[dict, list[SourceFile]]:
        base: dict = {}
        defined_in: dict[str, str] = {}
        sources = []
        for spec in specs:
            base_path, scope = resolve_base_path(spec, path, line)
            cfg, source = self.load(base_path, chain)
            source.scope = scope
            if scope is not None:
                for value in cfg.values():
                    _add_scope(value, scope)
            for key in cfg:
                if key in defined_in:
                    raise DuplicateBaseKeyError(
                        f"{path}: key {key!r} is defined by two of its bases, "
                        f"{defined_in[key]} and {source.path}. A top-level key may come from "
                        f"one base of a _base_ list only; move it to one of them or set it in "
                        f"{os.path.basename(path)}."
                    )
                defined_in[key] = source.path
            base.update(cfg)
            sources.append(source)
        return base, sources


def _base_specs_in_python(tree: ast.Module, path: str) -> tuple[Any, int | None]:
    for statement in tree.body:
        if _is_base_assignment(statement):
            try:
                return ast.literal_eval(statement.value), statement.lineno
            except ValueError:
                raise ConfigError(
                    f"{path}:{statement.lineno}: _base_ must be a string or a list of strings "
                    f"written literally, e.g. _base_ = ['../_base_/default_runtime.py']"
                ) from None
    return [], None


def _is_base_assignment(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == BASE_KEY
    )


def _as_spec_list(specs: Any, path: str, line: int | None) -> list[str]:
    specs = [specs] if isinstance(specs, str) else specs
    if not isinstance(specs, (list, tuple)) or not all(isinstance(s, str) for s in specs):
        where = f"{path}:{line}" if line else path
        raise ConfigError(f"{where}: _base_ must be a string or a list of strings, got {specs!r}")
    return list(specs)


def _mentions_base(text: str, base_assignments: int) -> bool:
    # Only a file that uses `_base_` as a variable needs it as a ConfigDict (attribute access,
    # in-place edits); the `_base_ = [...]` line itself accounts for one mention.
    return text.count(BASE_KEY) > (1 if base_assignments else 0)


def _run_python(tree: ast.Module, path: str, base: dict, uses_base: bool) -> tuple[dict, dict]:
    tree.body = [statement for statement in tree.body if not _is_base_assignment(statement)]
    code = compile(tree, path, "exec")
    if uses_base:
        base = ConfigDict(base)
    namespace: dict[str, Any] = {BASE_KEY: base}
    try:
        exec(code, namespace)
    except Exception as error:
        line = _line_in_traceback(error, path)
        raise config_raised(
            f"{path}:{line}: the config raised {type(error).__name__}: {error}", error
        ) from error
    cfg = {
        key: value
        for key, value in namespace.items()
        if key != BASE_KEY and not key.startswith("__") and not isinstance(value, _DROPPED_TYPES)
    }
    return cfg, base


def _line_in_traceback(error: BaseException, path: str) -> int | str:
    line: int | str = "?"
    trace = error.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == path:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _load_data(text: str, suffix: str, path: str) -> dict:
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{error.lineno}: invalid JSON: {error.msg}") from None
    else:
        try:
            import yaml
        except ImportError:
            raise ConfigError(
                f"{path}: reading YAML configs needs PyYAML: pip install pyyaml"
            ) from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 1 if mark is not None else "?"
            raise ConfigError(f"{path}:{line}: invalid YAML: {error}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must hold a mapping, got {type(data).__name__}")
    return data


def _add_scope(value: Any, scope: str, looking: bool = True) -> None:
    # A base read from another package (`pkg::path`) builds its types in that package's
    # registries: the outermost dict with a `type` on each branch gets `_scope_=pkg`.
    if isinstance(value, dict):
        if looking and "type" in value:
            looking = False
            if value.get("_scope_") is None:
                value["_scope_"] = scope
        for item in value.values():
            _add_scope(item, scope, looking)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _add_scope(item, scope, looking)


def _warn_if_deprecated(cfg: dict, path: str) -> None:
    info = cfg.pop(DEPRECATION_KEY, None)
    if info is None:
        return
    message = f"The config file {path} will be deprecated in the future."
    if "expected" in info:
        message += f" Please use {info['expected']} instead."
    if "reference" in info:
        message += f" More information can be found at {info['reference']}"
    warnings.warn(message, DeprecationWarning, stacklevel=2)
