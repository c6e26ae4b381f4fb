"""MMEngine's ``MMLogger`` entry points, for code that asks for its logger through them."""

from __future__ import annotations

import logging
import os
import warnings

from runnerx.suggest import refuse_unknown_keywords

from . import logger as _logger


class MMLogger:
    """Where code written for MMEngine gets its logger; the loggers themselves are standard
    ``logging.Logger`` objects set up by :func:`~runnerx.logging.get_logger`::

        from runnerx.logging import MMLogger

        logger = MMLogger.get_current_instance()  # the running Runner's logger
        logger.info('hello')
        logger = MMLogger.get_instance('mmdet', log_file='work_dirs/x/run.log')

    ``MMLogger(...)`` itself, and ``isinstance(logger, MMLogger)``, are MMEngine's only.
    """

    def __new__(cls, *args: object, **kwargs: object) -> MMLogger:
        raise TypeError(
            "MMLogger is not built directly in runnerx: use MMLogger.get_instance(name, "
            "log_file=..., log_level=...) or runnerx.logging.get_logger(...), which give a "
            "standard logging.Logger"
        )

    @classmethod
    def get_current_instance(cls) -> logging.Logger:
        """The current logger: the running Runner's, or the one set up last (a default
        ``'runnerx'`` logger when there is none, as MMEngine makes one)."""
        current = _logger._current_logger
        return current if current is not None else _logger.get_logger("runnerx")

    @classmethod
    def get_instance(
        cls,
        name: str,
        logger_name: str | None = None,
        log_file: str | os.PathLike | None = None,
        log_level: str | int = "INFO",
        file_mode: str = "w",
        distributed: bool = False,
        file_handler_cfg: dict | None = None,
        **kwargs: object,
    ) -> logging.Logger:
        """The logger of the instance ``name`` (created on first use), set up with
        ``log_file`` and ``log_level``; it becomes the current one. Its ``instance_name`` is
        ``name``; its lines show ``logger_name``, which defaults to ``name``: the logger is
        then the standard ``logging.getLogger(name)``, else a logger of its own called
        ``logger_name``. ``distributed=True`` gives every rank a log file of its own;
        ``file_handler_cfg`` writes the file with a handler of ``logging.handlers``
        (``dict(type='RotatingFileHandler', maxBytes=2**20, backupCount=3)``). MMEngine's
        ``file_mode`` is accepted and not used: files are appended to. Any other keyword is
        refused, naming it."""
        refuse_unknown_keywords("MMLogger.get_instance", kwargs, cls.get_instance)
        logger = _logger._instances.get(name)
        if logger is None:
            if logger_name in (None, name):
                logger = logging.getLogger(name)
            else:  # outside logging's registry, which knows loggers by their logger name
                logger = logging.Logger(logger_name)
            logger.instance_name = name
            _logger._instances[name] = logger
        elif logger_name not in (None, logger.name):
            warnings.warn(
                f"MMLogger {name!r} exists already with logger_name {logger.name!r}; "
                f"get_instance ignores logger_name={logger_name!r}",
                stacklevel=2,
            )
        _logger._set_up(logger, log_file, log_level, None, distributed, file_handler_cfg)
        _logger.make_logger_current(logger)
        return logger

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Whether :meth:`get_instance` set up the instance ``name``, or a logger called
        ``name`` was set up otherwise (it has handlers)."""
        if name in _logger._instances:
            return True
        return name in logging.Logger.manager.loggerDict and bool(logging.getLogger(name).handlers)
