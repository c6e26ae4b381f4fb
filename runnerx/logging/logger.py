"""The run's logger: coloured console lines on rank 0, a plain log file beside them.

Lines look like MMEngine's::

    2026/11/21 15:04:05 - runnerx - INFO - Epoch(train)  [1][10/23]  lr: 1.0000e-02  ...

Other ranks show warnings and errors only and write no file. A WARNING whose message a
handler has shown already is dropped, as MMEngine's logger drops it.

Each Runner logs through a logger of its own (:func:`get_run_logger`), so two Runners in one
process never write into each other's log file. The run that is running is the *current*
one: :func:`print_log` writes to it, and so do runnerx's own modules, whose standard
``logging.getLogger(__name__)`` loggers reach it through the ``'runnerx'`` logger.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import socket
import sys
import weakref
from collections.abc import Mapping
from typing import Any

from termcolor import colored

from runnerx.suggest import ASIDE, did_you_mean
from runnerx.utils.errors import ValueAssertionError

__all__ = [
    "MMLogger",  # noqa: F822  (from runnerx.logging.mmlogger, see __getattr__)
    "get_logger",
    "get_run_logger",
    "make_logger_current",
    "print_log",
]

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LEVEL_COLOURS = {
    logging.DEBUG: "green",
    logging.INFO: "white",
    logging.WARNING: "yellow",
    logging.ERROR: "red",
    logging.CRITICAL: "red",
}
_FORMATS = (
    "%(asctime)s - %(name)s - %(level_tag)s - %(message)s",
    # errors also say where they were logged, as MMEngine's lines do
    "%(asctime)s - %(name)s - %(level_tag)s - %(pathname)s - %(funcName)s - %(lineno)d - "
    "%(message)s",
)
_DATE_FORMAT = "%Y/%m/%d %H:%M:%S"

#: The logger :func:`print_log` writes to: the one :func:`get_logger` set up or
#: :func:`make_logger_current` named last.
_current_logger: logging.Logger | None = None

#: The loggers ``MMLogger.get_instance`` set up, by instance name (which is not their
#: logger name when ``logger_name`` was given); :func:`print_log` finds them by it.
_instances: dict[str, logging.Logger] = {}


class _LevelFormatter(logging.Formatter):
    """MMEngine's line layout; the level name is coloured on the console, plain in files;
    errors also name the file, function and line that logged them. A non-zero ``rank``'s
    lines say which rank they come from (``[rank 1] ...``): under torchrun every rank writes
    to the same console."""

    def __init__(self, colour: bool, rank: int = 0) -> None:
        tag = f"[rank {rank}] " if rank else ""
        line, error_line = (f.replace("%(message)s", tag + "%(message)s") for f in _FORMATS)
        super().__init__(line, datefmt=_DATE_FORMAT)
        self._error_formatter = logging.Formatter(error_line, datefmt=_DATE_FORMAT)
        self._colour = colour
        self._tags: dict[int, str] = {}  # level number -> its (coloured) name, made once

    def format(self, record: logging.LogRecord) -> str:
        tag = self._tags.get(record.levelno)
        if tag is None:
            tag = record.levelname
            if self._colour:
                # termcolor leaves the text plain when NO_COLOR is set or stdout is no terminal
                colour = _LEVEL_COLOURS.get(record.levelno, "white")
                tag = colored(tag, colour, attrs=["underline"])
            self._tags[record.levelno] = tag
        record.level_tag = tag
        if record.levelno >= logging.ERROR:
            return self._error_formatter.format(record)
        return super().format(record)


_WARNING = logging.WARNING


def _shown_before(seen: set[str], record: logging.LogRecord) -> bool:
    """Whether the message of the WARNING ``record`` is in ``seen``; adds it if not."""
    try:
        message = record.getMessage()
    except Exception:  # bad arguments: left to the handler, which reports them
        return False
    if message in seen:
        return True
    seen.add(message)
    return False


class _RepeatedWarningFilter(logging.Filter):
    """Drops a WARNING whose exact message its handler has shown already (MMEngine's logger
    does the same); records of other levels pass."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno != _WARNING or not _shown_before(self.seen, record)


class _ShowsWarningsOnce:
    """Mixin of the handlers get_logger makes: :class:`_RepeatedWarningFilter`'s check, done
    in the handler's own ``filter`` (which every record passes through anyway), so that a
    record of another level costs not one call more."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._warnings_seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> Any:
        if record.levelno == _WARNING and _shown_before(self._warnings_seen, record):
            return False
        return not self.filters or super().filter(record)


class _ConsoleHandler(_ShowsWarningsOnce, logging.StreamHandler):
    """The console handler get_logger adds (a class of its own so a second call finds it)."""


class _LogFileHandler(_ShowsWarningsOnce, logging.FileHandler):
    """The log-file handler get_logger adds (unless ``file_handler_cfg`` names another)."""


#: set on each log-file handler get_logger adds: the ``file_handler_cfg`` it was made from
_HANDLER_CFG = "_runnerx_file_handler_cfg"


def get_logger(
    name: str = "runnerx",
    log_file: str | os.PathLike | None = None,
    log_level: str | int = "INFO",
    rank: int | None = None,
    distributed: bool = False,
    file_handler_cfg: Mapping | None = None,
) -> logging.Logger:
    """The logger called ``name``, set up for this rank; it becomes the current logger.

    Rank 0 logs ``log_level`` and above to the console (level names coloured) and, when
    ``log_file`` is given, to that file without colour codes. Other ranks (``rank``
    defaults to :func:`runnerx.dist.get_rank`) show warnings and errors only and write no
    file. Calling again with the same name returns the same logger and adds no handlers;
    a new ``log_file`` replaces the old file handler. ``file_handler_cfg`` (MMEngine's)
    writes the file with a handler of ``logging.handlers`` in place of the plain one:
    ``dict(type='RotatingFileHandler', maxBytes=2**20, backupCount=3)``, its ``filename``
    ``log_file`` unless given. Each handler shows a WARNING with a given message once (as
    MMEngine's do); ``logger.instance_name`` is ``name`` (MMEngine's attribute).

    .. code-block:: python

        logger = get_logger('runnerx', log_file='work_dirs/x/20261121_150405.log')
        logger.info('hello')
    """
    logger = _set_up(
        logging.getLogger(name), log_file, log_level, rank, distributed, file_handler_cfg
    )
    logger.instance_name = name
    make_logger_current(logger)
    return logger


def get_run_logger(
    log_file: str | os.PathLike | None,
    log_level: str | int = "INFO",
    rank: int | None = None,
) -> logging.Logger:
    """A new logger for one run, set up as :func:`get_logger` sets one up, but of its own:
    outside ``logging``'s registry of names, so that no other run shares its handlers. Its
    lines say ``runnerx``, as does its ``instance_name``. Make it current with
    :func:`make_logger_current`. Its log file is closed when the logger is collected (a
    Runner dropped without a run), not left open."""
    logger = _set_up(logging.Logger("runnerx"), log_file, log_level, rank)
    logger.instance_name = "runnerx"
    weakref.finalize(logger, _close_handlers, logger.handlers)
    return logger


def _close_handlers(handlers: list[logging.Handler]) -> None:
    for handler in list(handlers):
        try:
            handler.close()
        except OSError as error:  # its last lines could not be flushed (a full disk)
            _log_file_failed(handler, error)


#: set on a log-file handler once it has said that it cannot write its file
_FAILED = "_runnerx_log_file_failed"


def _log_file_failed(handler: logging.Handler, error: BaseException | None) -> None:
    """Say once, in one line on stderr, that ``handler`` cannot write its log file (a full
    disk), in place of Python's ``--- Logging error ---`` dump for every record."""
    if getattr(handler, _FAILED, False) or not logging.raiseExceptions:
        return
    setattr(handler, _FAILED, True)
    path = getattr(handler, "baseFilename", handler)
    print(
        f"runnerx: cannot write the log file {path} ({error}); lines may be missing from it, "
        "the console shows them",
        file=sys.stderr,
    )


def make_logger_current(logger: logging.Logger) -> None:
    """Make ``logger`` the one :func:`print_log` writes to, and the one that shows what
    runnerx's own modules log (records of the ``'runnerx'`` logger and its children are
    handed to its handlers, at its level)."""
    global _current_logger
    _current_logger = logger
    package = logging.getLogger("runnerx")
    forward = next((h for h in package.handlers if isinstance(h, _ForwardToCurrent)), None)
    if package is logger:  # set up by get_logger: it shows its records itself
        if forward is not None:
            package.removeHandler(forward)
        return
    if forward is None:
        forward = _ForwardToCurrent()
        package.addHandler(forward)
        package.propagate = False
    forward.target = logger
    package.setLevel(logger.level)


class _ForwardToCurrent(logging.Handler):
    """On the ``'runnerx'`` logger: hands each record to the current run's logger."""

    def __init__(self) -> None:
        super().__init__()
        self.target: logging.Logger | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.target is not None:
            self.target.handle(record)


def _set_up(
    logger: logging.Logger,
    log_file: str | os.PathLike | None,
    log_level: str | int,
    rank: int | None,
    distributed: bool = False,
    file_handler_cfg: Mapping | None = None,
) -> logging.Logger:
    """Give ``logger`` its console handler and (rank 0) its file handler, at ``log_level``.
    At DEBUG level (or with ``distributed``) in a distributed run every rank writes a file of
    its own, named as MMEngine names them: ``<stem>_<host>_device<local rank>_rank<rank>.log``."""
    from runnerx.dist import get_local_rank, get_rank, get_world_size

    level = _parse_level(log_level)
    if rank is None:
        rank = get_rank()
    logger.setLevel(level)
    logger.propagate = False

    console = next((h for h in logger.handlers if isinstance(h, _ConsoleHandler)), None)
    if console is None:
        console = _ConsoleHandler(sys.stdout)
        console.setFormatter(_LevelFormatter(colour=True, rank=rank))
        logger.addHandler(console)
    console.setLevel(level if rank == 0 else max(level, logging.WARNING))

    every_rank = (level <= logging.DEBUG or distributed) and get_world_size() > 1
    if log_file is not None and every_rank:
        stem, suffix = os.path.splitext(os.fspath(log_file))
        host = socket.gethostname()
        log_file = f"{stem}_{host}_device{get_local_rank()}_rank{rank}{suffix}"
        _set_log_file(logger, os.path.abspath(log_file), level, file_handler_cfg)
    elif rank == 0 and log_file is not None:
        _set_log_file(logger, os.path.abspath(log_file), level, file_handler_cfg)
    elif rank != 0:
        _remove_file_handlers(logger)
    return logger


def print_log(
    msg: Any, logger: logging.Logger | str | None = None, level: int = logging.INFO
) -> None:
    """Log ``msg`` through ``logger`` (a Logger or a logger's name), or print it.

    ``logger=None`` (or ``'current'``) uses the current logger (the running Runner's, or
    the one :func:`get_logger` set up last), and prints when there is none; ``'silent'``
    drops the message. A name must be that of a logger that is set up (with a handler of
    its own or of a logger it propagates to): any other is a ValueError, as in MMEngine,
    rather than a message lost without a word.
    """
    if logger in (None, "current"):
        if _current_logger is None:
            print(msg)
            return
        logger = _current_logger
    elif logger == "silent":
        return
    elif isinstance(logger, str):
        logger = _named_logger(logger)
    elif not isinstance(logger, logging.Logger):
        raise TypeError(
            "logger must be a logging.Logger, a logger's name, 'current', 'silent' or None, "
            f"got {type(logger).__name__}"
        )
    logger.log(level, msg)


def _named_logger(name: str) -> logging.Logger:
    """The logger ``MMLogger.get_instance`` set up under ``name``, else the logger called
    ``name``, which must be set up (see :func:`print_log`)."""
    named = _instances.get(name) or logging.getLogger(name)
    if named.hasHandlers():
        return named
    set_up = [
        other
        for other, value in logging.Logger.manager.loggerDict.items()
        if isinstance(value, logging.Logger) and value.handlers
    ]
    hint = did_you_mean(name, set_up, form=ASIDE)
    raise ValueError(
        f"print_log: no logger called {name!r} is set up, so the message would be lost"
        f"{hint}; set it up with get_logger({name!r}, ...) or MMLogger.get_instance, or "
        "pass logger='current' (the running Runner's logger)"
    )


def _parse_level(log_level: str | int) -> int:
    if isinstance(log_level, int) and not isinstance(log_level, bool):
        return log_level
    if isinstance(log_level, str) and log_level.upper() in _LEVELS:
        return logging.getLevelName(log_level.upper())
    hint = did_you_mean(str(log_level).upper(), _LEVELS, form=ASIDE)
    raise ValueError(f"log_level must be one of {', '.join(_LEVELS)}, got {log_level!r}{hint}")


def _set_log_file(
    logger: logging.Logger, path: str, level: int, handler_cfg: Mapping | None = None
) -> None:
    handler_cfg = dict(handler_cfg) if handler_cfg is not None else None
    for handler in logger.handlers:
        same_file = getattr(handler, "baseFilename", None) == path
        if same_file and getattr(handler, _HANDLER_CFG, False) == handler_cfg:
            handler.setLevel(level)
            return
    _remove_file_handlers(logger)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handler = _file_handler(path, handler_cfg)
    if not isinstance(handler, _ShowsWarningsOnce):
        handler.addFilter(_RepeatedWarningFilter())
    setattr(handler, _HANDLER_CFG, handler_cfg)
    handler.handleError = lambda record: _log_file_failed(handler, sys.exc_info()[1])
    handler.setFormatter(_LevelFormatter(colour=False))
    handler.setLevel(level)
    logger.addHandler(handler)


def _file_handler(path: str, handler_cfg: dict | None) -> logging.FileHandler:
    """The plain log-file handler, or the ``logging.handlers`` class that ``handler_cfg``'s
    ``type`` names, made with its other keys (``filename`` defaults to ``path``)."""
    if handler_cfg is None:
        return _LogFileHandler(path, mode="a", encoding="utf-8")
    args = dict(handler_cfg)
    kind = args.pop("type", None)
    choices = {
        name: value
        for name, value in vars(logging.handlers).items()
        if isinstance(value, type) and issubclass(value, logging.FileHandler)
    }
    if kind not in choices:
        hint = did_you_mean(kind, choices, form=ASIDE)
        raise ValueAssertionError(
            f"file_handler_cfg.type must name a file handler of logging.handlers "
            f"({', '.join(sorted(choices))}), got {kind!r}{hint}"
        )
    args.setdefault("filename", path)
    args.setdefault("encoding", "utf-8")
    return choices[kind](**args)


def _remove_file_handlers(logger: logging.Logger) -> None:
    for handler in [h for h in logger.handlers if hasattr(h, _HANDLER_CFG)]:
        logger.removeHandler(handler)
        handler.close()


def __getattr__(name: str) -> Any:
    """``MMLogger`` at MMEngine's path (``from mmengine.logging.logger import MMLogger``);
    looked up on first use because runnerx.logging.mmlogger imports this module."""
    if name == "MMLogger":
        from .mmlogger import MMLogger

        return MMLogger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
