"""How a tool shows an error in the user's config: its message, without a traceback.

The errors of a config as written (a misspelt key, a config line that raises, an option that
cannot merge, a type no registry knows) say in their message which file:line or config key to
fix; the 25-50 lines of runnerx's own frames above it tell a user nothing more. A traceback
that passes through code of the user's (a function of their package that a config calls, a
model's ``__init__``) is kept, since it shows where in that code the error is.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Iterable, Iterator
from types import FrameType

from .errors import ConfigError, ConfigKeyError, ConfigSyntaxError, MergeTypeError
from .mmengine_imports import CONFIG_BUILTINS

#: errors that are about a config as written, with messages that say where
CONFIG_ERRORS = (ConfigError, ConfigSyntaxError, ConfigKeyError, MergeTypeError)

_RUNNERX = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_STDLIB = tuple(
    os.path.abspath(sysconfig.get_paths()[key]) + os.sep for key in ("stdlib", "platstdlib")
)


def config_error_text(error: BaseException, own_files: Iterable[str] = ()) -> str | None:
    """What to print, alone, for ``error`` when it is an error in the user's config; None for
    any other error, whose traceback helps.

    A config error is one of :data:`CONFIG_ERRORS`, or a registry build's refusal of a config
    dict, which names its key (``'MyNett' (cfg.model.type) is not registered``, an argument
    the class does not take), whose traceback and causes hold no frame of code other than
    runnerx's, Python's standard library's, the config files' and ``own_files`` (the tool
    script that caught it).
    """
    if not isinstance(error, CONFIG_ERRORS) and not _refused_by_build(error):
        return None
    own = {os.path.abspath(file) for file in own_files}
    if any(_is_users(frame, own) for frame in _frames(error)):
        return None
    if isinstance(error, SyntaxError):
        shown = traceback.format_exception_only(error)[1:-1]  # the line and its caret
        text = str(error.msg) + ("\n" + "".join(shown).rstrip("\n") if shown else "")
    else:
        text = str(error)
    return "\n".join([text, *getattr(error, "__notes__", ())])


def _refused_by_build(error: BaseException) -> bool:
    """Whether a registry build refused the config before any code of the class it names ran
    (a type no registry knows, an argument the class does not take), with an error that names
    the config key; an error raised inside a class's code (a bug of runnerx's, say) is not."""
    from runnerx.registry.errors import is_wrapped

    if not is_wrapped(error):
        return False
    innermost = None
    for frame in _frames(error):  # the cause's frames come last: it was raised deepest
        innermost = frame
    registry = os.path.join(_RUNNERX, "registry") + os.sep
    return innermost is not None and os.path.abspath(innermost.f_code.co_filename).startswith(
        registry
    )


def _frames(error: BaseException) -> Iterator[FrameType]:
    """The frames of ``error``'s traceback and of the errors it was raised from or during."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        trace = error.__traceback__
        while trace is not None:
            yield trace.tb_frame
            trace = trace.tb_next
        if error.__cause__ is not None or error.__suppress_context__:
            error = error.__cause__
        else:
            error = error.__context__


def _is_users(frame: FrameType, own: set[str]) -> bool:
    """Whether ``frame`` runs code of the user's (or a library's): not runnerx's, the standard
    library's, a config file's (which run with runnerx's builtins) or one of ``own``."""
    if frame.f_globals.get("__builtins__") is CONFIG_BUILTINS:
        return False
    file = frame.f_code.co_filename
    if file.startswith("<"):  # <frozen importlib._bootstrap>, <string>
        return False
    file = os.path.abspath(file)
    return not (file.startswith((_RUNNERX, *_STDLIB)) or file in own)
