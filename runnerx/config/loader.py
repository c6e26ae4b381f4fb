"""Reading a config file, and everything it inherits through ``_base_``, into one dict.

A ``.py`` config runs as Python with ``_base_`` bound to the merged inherited config, so a file
may read (``_base_.model.backbone``) and change (``_base_.train_pipeline[1]['scale'] = ...``)
what it inherits; then its own top-level names are merged over the inherited ones (see
:mod:`runnerx.config.merge`). ``.json`` and ``.yaml`` files inherit the same way. A ``.py``
config with a ``with read_base():`` block is read by :mod:`runnerx.config.read_base_loader`.
"""

from __future__ import annotations

import ast
import json
import os
import warnings
from dataclasses import dataclass
from typing import Any

from .base_names import refuse_misspelt_base_in_data, refuse_misspelt_base_in_python
from .config_dict import ConfigDict
from .errors import (
    ConfigError,
    ConfigFileNotFoundError,
    ConfigFormatError,
    DuplicateBaseKeyError,
    InheritanceCycleError,
    MergeTypeError,
)
from .external import resolve_base_path
from .merge import merge_conflict, merge_into
from .provenance import where_set
from .read_base import find_base_imports, inherited_by_base_error
from .read_base_loader import load_read_base_config
from .source import (
    BASE_KEY,
    SUPPORTED_SUFFIXES,
    SourceFile,
    assigns_base,
    config_values,
    parse_python,
    run_config_code,
)
from .templates import fill_base_references, hide_base_references, substitute_file_and_env_vars
from .yaml_text import load_yaml

DEPRECATION_KEY = "_deprecation_"


@dataclass
class LoadedConfig:
    """The result of reading a config tree."""

    cfg: dict
    source: SourceFile
    env_variables: dict[str, str]


def load_config_file(
    path: str,
    use_predefined_variables: bool = True,
    use_environment_variables: bool = True,
    lazy_import: bool | None = None,
) -> LoadedConfig:
    """Read ``path`` and its bases into a plain dict (values may include ConfigDicts).

    ``lazy_import`` (``Config.fromfile``'s) says whether a ``.py`` file is read in the
    ``with read_base():`` style: None when it has such a block, True always, False never.
    """
    loader = _Loader(use_predefined_variables, use_environment_variables, lazy_import)
    cfg, source = loader.load(os.fspath(path), chain=())
    return LoadedConfig(cfg, source, loader.env_variables)


class _Loader:
    def __init__(
        self,
        use_predefined_variables: bool,
        use_environment_variables: bool,
        lazy_import: bool | None = None,
    ) -> None:
        self.file_vars = use_predefined_variables
        self.env_vars = use_environment_variables
        self.lazy_import = lazy_import
        self.env_variables: dict[str, str] = {}

    def read(self, path: str, chain: tuple[str, ...]) -> tuple[str, str, str]:
        """The absolute path of a config file, its text, and its text with the file and
        environment templates replaced; ``chain`` holds the files inheriting it."""
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
        return path, raw, text

    def load(
        self, path: str, chain: tuple[str, ...], inherited_at: str | None = None
    ) -> tuple[dict, SourceFile]:
        path, raw, text = self.read(path, chain)
        suffix = os.path.splitext(path)[1]
        tree = data = None
        if suffix == ".py":
            tree = parse_python(text, path)
            lazy_import = None if chain else self.lazy_import
            imports = find_base_imports(tree, path, lazy_import, guess=not chain)
            if imports is not None:
                if inherited_at is not None:
                    raise inherited_by_base_error(path, inherited_at)
                module = load_read_base_config(self.read, path, (raw, text), tree, imports, chain)
                return module.config(), module.source

        text, placeholders = hide_base_references(text)
        if tree is not None:
            if placeholders:
                tree = parse_python(text, path)
            base_specs, base_line = _base_specs_in_python(tree, path)
            if base_line is None:
                refuse_misspelt_base_in_python(tree, path)
        else:
            data = _load_data(text, suffix, path)
            if BASE_KEY not in data:
                refuse_misspelt_base_in_data(data, text, path)
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
        source = SourceFile(path, raw, text, base_sources)
        merged = _merge_over_bases(cfg, base, source)
        merged = {key: value for key, value in merged.items() if not key.startswith("__")}
        return merged, source

    def _load_bases(
        self, specs: list[str], path: str, line: int | None, chain: tuple[str, ...]
    ) -> tuple[dict, list[SourceFile]]:
        base: dict = {}
        defined_in: dict[str, str] = {}
        sources = []
        for spec in specs:
            base_path, scope = resolve_base_path(spec, path, line)
            where = f"{path}:{line}" if line else path
            cfg, source = self.load(base_path, chain, inherited_at=where)
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


def _merge_over_bases(cfg: dict, base: dict, source: SourceFile) -> dict:
    """``cfg`` merged over what ``source`` inherits; a dict over an inherited value that is no
    dict is an error naming the file and line of each."""
    try:
        return merge_into(cfg, base)
    except MergeTypeError as error:
        if error.where is not None:  # from a base, which named its own files
            raise
        where = where_set(source, error.key) or source.path
        inherited_from = where_set(source, error.key, inherited=True)
        raise merge_conflict(
            error.key, error.value, error.inherited, where, inherited_from
        ) from None


def _base_specs_in_python(tree: ast.Module, path: str) -> tuple[Any, int | None]:
    for statement in tree.body:
        if assigns_base(statement):
            try:
                return ast.literal_eval(statement.value), statement.lineno
            except ValueError:
                raise ConfigError(
                    f"{path}:{statement.lineno}: _base_ must be a string or a list of strings "
                    f"written literally, e.g. _base_ = ['../_base_/default_runtime.py']"
                ) from None
    return [], None


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
    tree.body = [statement for statement in tree.body if not assigns_base(statement)]
    if uses_base:
        base = ConfigDict(base)
    namespace: dict[str, Any] = {BASE_KEY: base}
    run_config_code(tree, path, namespace)
    return config_values(namespace, {BASE_KEY}), base


def _load_data(text: str, suffix: str, path: str) -> dict:
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{error.lineno}: invalid JSON: {error.msg}") from None
    else:
        data = load_yaml(text, path)
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
