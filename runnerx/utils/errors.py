"""Errors for bad arguments that MMEngine reports with another type (mostly with ``assert``).

Each is the specific type runnerx raises (a ValueError, TypeError or KeyError, with a message naming
what was wrong) and also MMEngine's type (most often AssertionError), so ``except AssertionError``
in code written for MMEngine keeps catching it::

    from runnerx.utils.errors import ValueAssertionError

    try:
        raise ValueAssertionError("momentum must be in (0, 1), got 2")
    except AssertionError as error:      # MMEngine's type
        assert isinstance(error, ValueError)
"""


class ValueAssertionError(ValueError, AssertionError):
    """A bad value (also an AssertionError, as MMEngine reports it)."""


class TypeAssertionError(TypeError, AssertionError):
    """A value of the wrong type (also an AssertionError, as MMEngine reports it)."""


class KeyAssertionError(KeyError, AssertionError):
    """An unknown name (also an AssertionError, as MMEngine reports it); its message is shown
    as written, not quoted as a KeyError's would be."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ValueKeyError(ValueError, KeyError):
    """A bad name that MMEngine's registry reports as a KeyError; its message is shown as
    written, not quoted as a KeyError's would be."""

    __str__ = KeyAssertionError.__str__


class ValueTypeError(ValueError, TypeError):
    """A bad value that MMEngine reports as a TypeError (a str where an int is expected)."""


class ValueNotImplementedError(ValueError, NotImplementedError):
    """A choice outside the supported ones (MMEngine raises NotImplementedError for it)."""


class ValueRuntimeError(ValueError, RuntimeError):
    """A bad value that MMEngine reports as a RuntimeError (two visualizer backends of one
    name)."""


class RuntimeAssertionError(RuntimeError, AssertionError):
    """A call made in the wrong order (also an AssertionError, as MMEngine reports it)."""
