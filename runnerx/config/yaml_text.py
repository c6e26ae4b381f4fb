"""Reading a YAML config's text: PyYAML's safe loader, plus the tuples MMEngine writes.

MMEngine dumps a config to YAML with ``yaml.dump``, which writes a tuple as
``!!python/tuple [1, 5]``. The loader is the one :func:`runnerx.fileio.load` reads YAML with,
which builds those as tuples, so such a file loads with the values MMEngine saved; every other
``!!python/...`` tag (``!!python/name:``, ``!!python/object:``) can run code when built, and
stays refused.
"""

from __future__ import annotations

from typing import Any

from runnerx.fileio.handlers.yaml_handler import plain_data_loader

from .errors import ConfigError


def load_yaml(text: str, path: str) -> Any:
    """The data of YAML ``text`` read from ``path``; invalid YAML, or a tag that builds
    something other than plain data or a tuple, is a :class:`ConfigError` naming
    ``path:line``."""
    try:
        import yaml
    except ImportError:
        raise ConfigError(
            f"{path}: reading YAML configs needs PyYAML: pip install pyyaml"
        ) from None
    try:
        return yaml.load(text, Loader=plain_data_loader())
    except yaml.constructor.ConstructorError as error:
        tag = _unknown_tag(error)
        if tag is None:
            raise ConfigError(f"{path}:{_line(error)}: invalid YAML: {error}") from None
        raise ConfigError(
            f"{path}:{_line(error)}: the YAML tag {_short_tag(tag)!r} is not allowed: YAML "
            "configs are read with a safe loader, which builds plain data and tuples "
            "('!!python/tuple') only; write the value as plain data (a class as its import "
            "path, e.g. type: torch.optim.SGD), or use a .py config"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}:{_line(error)}: invalid YAML: {error}") from None


def _unknown_tag(error: Exception) -> str | None:
    """The tag a ConstructorError says no constructor exists for, else None."""
    problem = getattr(error, "problem", "") or ""
    marker = "could not determine a constructor for the tag "
    if not problem.startswith(marker):
        return None
    return problem[len(marker) :].strip("'\"")


def _short_tag(tag: str) -> str:
    """``!!python/name:torch.optim.SGD`` for ``tag:yaml.org,2002:python/name:torch.optim.SGD``."""
    prefix = "tag:yaml.org,2002:"
    return "!!" + tag[len(prefix) :] if tag.startswith(prefix) else tag


def _line(error: Exception) -> int | str:
    mark = getattr(error, "problem_mark", None)
    return mark.line + 1 if mark is not None else "?"
