"""Logging and visualisation: the logger, MessageHub, LogProcessor, Visualizer, backends.

Importing this package registers LogProcessor, Visualizer, LocalVisBackend and
TensorboardVisBackend (it is the ``locations`` entry of LOG_PROCESSORS, VISUALIZERS and
VISBACKENDS). TensorBoard itself is imported only when a TensorboardVisBackend first writes.
See docs/logging.md.
"""

from .history_buffer import HistoryBuffer
from .log_processor import LogProcessor
from .logger import get_logger, get_run_logger, make_logger_current, print_log
from .message_hub import MessageHub, ScalarRecorder
from .progress_bar import ProgressBar
from .vis_backends import BaseVisBackend, LocalVisBackend, TensorboardVisBackend
from .visualizer import Visualizer

__all__ = [
    "BaseVisBackend",
    "HistoryBuffer",
    "LocalVisBackend",
    "LogProcessor",
    "MessageHub",
    "ProgressBar",
    "ScalarRecorder",
    "TensorboardVisBackend",
    "Visualizer",
    "get_logger",
    "get_run_logger",
    "make_logger_current",
    "print_log",
]
