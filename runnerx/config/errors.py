"""Errors raised while reading config files; each names the file (and line) to fix."""

from __future__ import annotations


class ConfigError(Exception):
    """A config file cannot be read as written; the message names the file and what to fix."""


def config_raised(message: str, error: Exception) -> ConfigError:
    """A :class:`ConfigError` with ``message`` about ``error``, which the config's own code
    raised, that is also of ``error``'s type: ``except TypeError`` around
    ``Config.fromfile`` still catches the config's TypeError, as with MMEngine."""
    kind = type(error)
    if kind not in _RAISED:
        try:
            _RAISED[kind] = type(
                f"Config{kind.__name__}", (ConfigError, kind), {"__str__": Exception.__str__}
            )
        except TypeError:  # a type that cannot be subclassed, or whose layout conflicts
            _RAISED[kind] = ConfigError
    try:
        return _RAISED[kind](message)
    except Exception:  # a type whose constructor wants other arguments
        return ConfigError(message)


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


class ConfigFormatError(ConfigError, OSError):
    """A config file whose suffix is not .py, .json, .yaml or .yml; an ``OSError`` (``IOError``)
    as in MMEngine."""


class ConfigKeyError(KeyError):
    """A key path that does not lead anywhere in a config; the message says why."""

    def __str__(self) -> str:
        return str(self.args[0])


class MissingEnvVariableError(ConfigError, ConfigKeyError):
    """A ``{{$NAME:}}`` template names an unset environment variable and gives no default; a
    ``KeyError`` as in MMEngine."""


class MissingBaseVariableError(ConfigError, ConfigKeyError):
    """``with read_base():`` imports a name that the base config does not define; a
    ``KeyError`` as in MMEngine."""


class DuplicateBaseKeyError(ConfigError, ConfigKeyError):
    """Two base files of one ``_base_`` list define the same top-level key."""


class ConfigParsingError(ConfigError, RuntimeError):
    """A config breaks the rules of the ``with read_base():`` style (a statement other than an
    import in the block, both ``_base_`` and ``with read_base():`` in one inheritance chain,
    ...); a ``RuntimeError`` as MMEngine's ``ConfigParsingError``."""


class ConfigTypeError(ConfigError, TypeError):
    """A config key holds a value of the wrong kind for what reads it (``custom_imports``
    given as a list, not a dict), or an option sets a key below a value that holds no keys
    (``--cfg-options lr.value=1`` over ``lr=0.1``); a ``TypeError`` as in MMEngine."""


# the error type raised for each type of error a config's own code raised
_RAISED: dict[type, type] = {TypeError: ConfigTypeError}


class InheritanceCycleError(ConfigError):
    """Config files inherit from each other in a loop."""


class MergeTypeError(TypeError):
    """A dict over a value that is not a dict, without ``_delete_=True``, in a child config or
    in options merged into a config. ``key`` (the dotted key path), ``value`` (the dict),
    ``inherited`` (the value under it) and ``where`` (``file:line`` of the dict, when read
    from a file) say what and where; build one with :func:`runnerx.config.merge.merge_conflict`.
    """

    key: str
    value: dict
    inherited: object
    where: str | None
