"""The ``{{ ... }}`` templates a config file may contain, replaced in its text before it runs.

* ``{{ fileDirname }}``, ``{{ fileBasename }}``, ``{{ fileBasenameNoExtension }}``,
  ``{{ fileExtname }}``: facts about the config file itself;
* ``{{$ENV_NAME:default}}``: an environment variable, or the default when it is unset;
* ``{{_base_.a.b}}``: a value of the inherited config, put in after the file has run.
"""

from __future__ import annotations

import os
import re
import uuid
from typing import Any

from .errors import ConfigError, MissingEnvVariableError

_FILE_VARS = re.compile(
    r"\{\{\s*(fileDirname|fileBasename|fileBasenameNoExtension|fileExtname)\s*\}\}"
)
_ENV_VAR = re.compile(r"\{\{['\"]?\s*\$(\w+)\s*:\s*(\S*?)\s*['\"]?\}\}")
_BASE_VAR = re.compile(r"\{\{\s*_base_\.([\w.]+)\s*\}\}")
_PLACEHOLDER_PREFIX = "__runnerx_inherited_"


def substitute_file_and_env_vars(
    text: str, path: str, env_seen: dict[str, str], file_vars: bool = True, env_vars: bool = True
) -> str:
    """Replace the file and environment templates in ``text``; record env values used."""
    if "{{" not in text:
        return text
    stem, ext = os.path.splitext(os.path.basename(path))
    values = {
        "fileDirname": os.path.dirname(path).replace("\\", "/"),
        "fileBasename": os.path.basename(path),
        "fileBasenameNoExtension": stem,
        "fileExtname": ext,
    }
    if file_vars:
        text = _FILE_VARS.sub(lambda match: values[match.group(1)], text)

    def env_value(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            env_seen[name] = os.environ[name]
            return os.environ[name]
        if not default:
            line = text.count("\n", 0, match.start()) + 1
            raise MissingEnvVariableError(
                f"{path}:{line}: environment variable {name} is not set and "
                f"{match.group(0)} gives no default. Set {name} or write {{{{${name}:default}}}}."
            )
        return default

    return _ENV_VAR.sub(env_value, text) if env_vars else text


def hide_base_references(text: str) -> tuple[str, dict[str, str]]:
    """Replace each ``{{_base_.a.b}}`` with a unique string literal so the file can run.

    Returns the new text and ``{placeholder: 'a.b'}`` for :func:`fill_base_references`.
    """
    if "_base_." not in text:
        return text, {}
    placeholders: dict[str, str] = {}
    by_path: dict[str, str] = {}

    def placeholder(match: re.Match) -> str:
        dotted = match.group(1)
        if dotted not in by_path:
            by_path[dotted] = f"{_PLACEHOLDER_PREFIX}{uuid.uuid4().hex[:12]}__"
            placeholders[by_path[dotted]] = dotted
        return f'"{by_path[dotted]}"'

    return _BASE_VAR.sub(placeholder, text), placeholders


def fill_base_references(value: Any, placeholders: dict[str, str], base: dict, path: str) -> Any:
    """Put the inherited values where :func:`hide_base_references` left placeholders."""
    if isinstance(value, str):
        if value in placeholders:
            return _lookup(base, placeholders[value], path)
        if _PLACEHOLDER_PREFIX in value:
            _refuse_inside_string(value, placeholders, path)
        return value
    if isinstance(value, dict):
        for key, item in value.items():
            filled = fill_base_references(item, placeholders, base, path)
            if filled is not item:
                value[key] = filled
        return value
    if isinstance(value, (list, tuple)):
        filled = [fill_base_references(item, placeholders, base, path) for item in value]
        if any(new is not old for new, old in zip(filled, value)):
            return filled if type(value) is list else type(value)(filled)
    return value


def _refuse_inside_string(value: str, placeholders: dict[str, str], path: str) -> None:
    for placeholder, dotted in placeholders.items():
        if placeholder in value:
            raise ConfigError(
                f"{path}: {{{{_base_.{dotted}}}}} is inside a string; such a template stands for "
                f"a whole value (x = {{{{_base_.{dotted}}}}}), its text is not put into a string. "
                f"In a .py config join the value in: 'prefix_' + _base_.{dotted}"
            )


def _lookup(base: Any, dotted: str, path: str) -> Any:
    node = base
    for depth, part in enumerate(dotted.split(".")):
        try:
            node = node[int(part)] if isinstance(node, (list, tuple)) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            where = ".".join(dotted.split(".")[:depth]) or "the inherited config"
            raise ConfigError(
                f"{path}: {{{{_base_.{dotted}}}}} refers to {part!r}, which {where} does not have"
            ) from None
    return node
