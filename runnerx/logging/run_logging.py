"""What a run logs with: the visualizer it gets by default, and how its logger, MessageHub and
visualizer become the current ones (the Runner builds them: runnerx.runner.setup_steps)."""

from __future__ import annotations

from typing import Any

from .logger import make_logger_current
from .message_hub import MessageHub
from .visualizer import Visualizer

#: the visualizer a run gets when its config names none
DEFAULT_VISUALIZER = dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")])


def make_current(logger: Any, message_hub: MessageHub, visualizer: Any) -> None:
    """Make a run's logger, MessageHub and visualizer the current ones: what ``print_log``,
    runnerx's own modules and ``get_current_instance()`` reach."""
    make_logger_current(logger)
    message_hub.make_current()
    if isinstance(visualizer, Visualizer):
        visualizer.make_current()
