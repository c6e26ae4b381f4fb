"""Decorators that keep old names working while telling users to move on (MMEngine's)."""

from __future__ import annotations

import functools
import inspect
import logging
import textwrap
import warnings
from collections.abc import Callable
from typing import Any

from runnerx.utils.errors import TypeAssertionError

__all__ = ["deprecated_api_warning", "deprecated_function"]


def deprecated_api_warning(name_dict: dict, cls_name: str | None = None) -> Callable:
    """A decorator that accepts the old argument names in ``name_dict`` (old -> new) with a
    DeprecationWarning and passes the value on under the new name.

    .. code-block:: python

        @deprecated_api_warning({'img_scale': 'scale'}, cls_name='Resize')
        def __init__(self, scale=None): ...

        Resize(img_scale=(224, 224))     # warns, then runs as Resize(scale=(224, 224))

    Giving both the old and the new name is a TypeError. A positional argument warns when the
    decorated function still names its parameter the old way.
    """

    def decorate(old_func: Callable) -> Callable:
        func_name = old_func.__name__ if cls_name is None else f"{cls_name}.{old_func.__name__}"
        param_names = inspect.getfullargspec(old_func).args

        def warn(old: str, new: str) -> None:
            warnings.warn(
                f'"{old}" is deprecated in `{func_name}`, please use "{new}" instead',
                DeprecationWarning,
                stacklevel=3,
            )

        @functools.wraps(old_func)
        def new_func(*args: Any, **kwargs: Any) -> Any:
            positional = param_names[: len(args)]
            for old, new in name_dict.items():
                if old in positional:
                    warn(old, new)
                if old in kwargs:
                    if new in kwargs:
                        raise TypeAssertionError(
                            f"`{func_name}` got both {old!r} and {new!r}; {old!r} is the "
                            f"deprecated name of {new!r}: pass {new!r} only"
                        )
                    warn(old, new)
                    kwargs[new] = kwargs.pop(old)
            return old_func(*args, **kwargs)

        return new_func

    return decorate


def deprecated_function(since: str, removed_in: str, instructions: str) -> Callable:
    """A decorator that logs a warning (through the current logger) on each call of the
    function and adds a ``.. deprecated::`` note to the top of its docstring.

    .. code-block:: python

        @deprecated_function('0.2.0', '0.4.0', 'use new_func instead')
        def old_func(): ...
    """

    def decorate(function: Callable) -> Callable:
        message = (
            f"'{function.__module__}.{function.__name__}' is deprecated in version {since} and "
            f"will be removed in version {removed_in}. Please {instructions}."
        )

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            from runnerx.logging.logger import print_log  # the logging package imports torch

            print_log(message, logger="current", level=logging.WARNING)
            return function(*args, **kwargs)

        note = (
            f".. deprecated:: {since}\n    Deprecated and will be removed in version "
            f"{removed_in}.\n    Please {instructions}.\n"
        )
        doc = inspect.cleandoc(function.__doc__ or "")
        wrapper.__doc__ = note + ("\n" + textwrap.indent(doc, "    ") if doc else "")
        return wrapper

    return decorate
