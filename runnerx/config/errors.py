"""Errors raised while reading config files; each names the file (and line) to fix."""

from __future__ import annotations


class ConfigError(Exception):
    """A config file cannot be read as written; the message names the file and what to fix."""


class ConfigSyntaxError(SyntaxError):
    """A config file is not valid Python; shown with its file, line and a caret."""

    def __init__(self, path: str, error: SyntaxError) -> None:
        line = error.lineno or 0
        super().__init__(
            f"{path}:{line}: invalid Python in config file: {error.msg}",
            (path, line, error.offset, error.text, error.end_lineno, error.end_offset),
        )


class ConfigFileNotFoundError(ConfigError, FileNotFoundError):
    """A config file, or a base file one of them names, does not exist."""


class ConfigKeyError(KeyError):
    """A key path that does not lead anywhere in a config; the message says why."""

    def __str__(self) -> str:
        return str(self.args[0])


class DuplicateBaseKeyError(ConfigError, ConfigKeyError):
    """Two base files of one ``_base_`` list define the same top-level key."""


class InheritanceCycleError(ConfigError):
    """Config files inherit from each other in a loop."""
