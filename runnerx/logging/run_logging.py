"""What a run logs with: its logger, MessageHub, log processor and visualizer, built at once."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from runnerx.config.config_dict import keyed_copy
from runnerx.registry import LOG_PROCESSORS, VISUALIZERS

from .log_processor import LogProcessor
from .logger import get_run_logger, make_logger_current
from .message_hub import MessageHub
from .visualizer import Visualizer

#: the visualizer a run gets when its config names none
DEFAULT_VISUALIZER = dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")])


@dataclass
class RunLogging:
    """The logging pieces of one run."""

    logger: Any
    message_hub: MessageHub
    log_processor: Any
    visualizer: Any


def build_run_logging(
    name: str,
    log_dir: str,
    timestamp: str,
    log_level: str | int = "INFO",
    log_processor: Any = None,
    visualizer: Any = None,
) -> RunLogging:
    """The run's own logger (console, and ``<log_dir>/<timestamp>.log``), its MessageHub
    (``name``, new and empty), the ``log_processor`` and the ``visualizer`` (saving under
    ``log_dir``), each from a config dict or given built; all of them current."""
    logger = get_run_logger(os.path.join(log_dir, f"{timestamp}.log"), log_level)
    if isinstance(log_processor, dict):
        log_processor = LOG_PROCESSORS.build(
            keyed_copy({"type": "LogProcessor", **log_processor}, "log_processor")
        )
    if isinstance(visualizer, dict) or visualizer is None:
        visualizer = VISUALIZERS.build(
            keyed_copy({"name": name, **(visualizer or DEFAULT_VISUALIZER)}, "visualizer"),
            default_args={"save_dir": log_dir},
        )
    hub = MessageHub.new_instance(name)
    make_current(logger, hub, visualizer)
    return RunLogging(logger, hub, log_processor or LogProcessor(), visualizer)


def make_current(logger: Any, message_hub: MessageHub, visualizer: Any) -> None:
    """Make a run's logger, MessageHub and visualizer the current ones: what ``print_log``,
    runnerx's own modules and ``get_current_instance()`` reach."""
    make_logger_current(logger)
    message_hub.make_current()
    if isinstance(visualizer, Visualizer):
        visualizer.make_current()
