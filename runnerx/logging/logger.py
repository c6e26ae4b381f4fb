"""The run's logger: coloured console lines on rank 0, a plain log file beside them.

Lines look like MMEngine's::

    2026/11/21 15:04:05 - runnerx - INFO - Epoch(train)  [1][10/23]  lr: 1.0000e-02  ...

Other ranks show warnings and errors only and write no file.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from termcolor import colored

from runnerx.suggest import close_matches

_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_LEVEL_COLOURS = {
    logging.DEBUG: "green",
    logging.INFO: "white",
    logging.WARNING: "yellow",
    logging.ERROR: "red",
    logging.CRITICAL: "red",
}
_FORMAT = "%(asctime)s - %(name)s - %(level_tag)s - %(message)s"
_DATE_FORMAT = "%Y/%m/%d %H:%M:%S"

#: The name of the logger :func:`get_logger` made last; :func:`print_log` writes to it.
_current_logger_name: str | None = None


class _LevelFormatter(logging.Formatter):
    """MMEngine's line layout; the level name is coloured on the console, plain in files."""

    def __init__(self, colour: bool) -> None:
        super().__init__(_FORMAT, datefmt=_DATE_FORMAT)
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
        return super().format(record)


class _ConsoleHandler(logging.StreamHandler):
    """The console handler get_logger adds (a class of its own so a second call finds it)."""


class _LogFileHandler(logging.FileHandler):
    """The log-file handler get_logger adds."""


def get_logger(
    name: str = "runnerx",
    log_file: str | os.PathLike | None = None,
    log_level: str | int = "INFO",
    rank: int | None = None,
) -> logging.Logger:
    """The logger called ``name``, set up for this rank; it becomes the current logger.

    Rank 0 logs ``log_level`` and above to the console (level names coloured) and, when
    ``log_file`` is given, to that file without colour codes. Other ranks (``rank``
    defaults to :func:`runnerx.dist.get_rank`) show warnings and errors only and write no
    file. Calling again with the same name returns the same logger and adds no handlers;
    a new ``log_file`` replaces the old file handler.

    .. code-block:: python

        logger = get_logger('runnerx', log_file='work_dirs/x/20261121_150405.log')
        logger.info('hello')
    """
    global _current_logger_name
    level = _parse_level(log_level)
    if rank is None:
        from runnerx.dist import get_rank

        rank = get_rank()
    logger = logging.getLogger(name)
    logger.setLevel(level)
    logger.propagate = False

    console = next((h for h in logger.handlers if isinstance(h, _ConsoleHandler)), None)
    if console is None:
        console = _ConsoleHandler(sys.stdout)
        console.setFormatter(_LevelFormatter(colour=True))
        logger.addHandler(console)
    console.setLevel(level if rank == 0 else max(level, logging.WARNING))

    if rank == 0 and log_file is not None:
        _set_log_file(logger, os.path.abspath(log_file), level)
    elif rank != 0:
        _remove_file_handlers(logger)
    _current_logger_name = name
    return logger


def print_log(
    msg: Any, logger: logging.Logger | str | None = None, level: int = logging.INFO
) -> None:
    """Log ``msg`` through ``logger`` (a Logger or a logger's name), or print it.

    ``logger=None`` (or ``'current'``) uses the logger :func:`get_logger` made last, and
    prints when there is none; ``'silent'`` drops the message.
    """
    if logger in (None, "current"):
        if _current_logger_name is None:
            print(msg)
            return
        logger = logging.getLogger(_current_logger_name)
    elif logger == "silent":
        return
    elif isinstance(logger, str):
        logger = logging.getLogger(logger)
    elif not isinstance(logger, logging.Logger):
        raise TypeError(
            "logger must be a logging.Logger, a logger's name, 'current', 'silent' or None, "
            f"got {type(logger).__name__}"
        )
    logger.log(level, msg)


def _parse_level(log_level: str | int) -> int:
    if isinstance(log_level, int) and not isinstance(log_level, bool):
        return log_level
    if isinstance(log_level, str) and log_level.upper() in _LEVELS:
        return logging.getLevelName(log_level.upper())
    close = close_matches(str(log_level).upper(), _LEVELS, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"log_level must be one of {', '.join(_LEVELS)}, got {log_level!r}{hint}")


def _set_log_file(logger: logging.Logger, path: str, level: int) -> None:
    for handler in logger.handlers:
        if isinstance(handler, _LogFileHandler) and handler.baseFilename == path:
            handler.setLevel(level)
            return
    _remove_file_handlers(logger)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    handler = _LogFileHandler(path, mode="a", encoding="utf-8")
    handler.setFormatter(_LevelFormatter(colour=False))
    handler.setLevel(level)
    logger.addHandler(handler)


def _remove_file_handlers(logger: logging.Logger) -> None:
    for handler in [h for h in logger.handlers if isinstance(h, _LogFileHandler)]:
        logger.removeHandler(handler)
        handler.close()
