"""Logging and visualisation: the logger, MessageHub, LogProcessor, Visualizer, backends.

Importing this package registers LogProcessor, Visualizer, LocalVisBackend,
TensorboardVisBackend, WandbVisBackend, MLflowVisBackend, ClearMLVisBackend and
DVCLiveVisBackend (it is the ``locations`` entry of LOG_PROCESSORS, VISUALIZERS and
VISBACKENDS). TensorBoard and the trackers themselves are imported only when their backend
first writes.
See docs/logging.md.
"""

from .history_buffer import HistoryBuffer
from .log_processor import LogProcessor
from .logger import get_logger, get_run_logger, make_logger_current, print_log
from .message_hub import MessageHub, ScalarRecorder
from .mmlogger import MMLogger
from .progress_bar import ProgressBar
from .vis_backends import BaseVisBackend, LocalVisBackend, TensorboardVisBackend
from .vis_backends_external import MLflowVisBackend, WandbVisBackend
from .vis_backends_trackers import ClearMLVisBackend, DVCLiveVisBackend
from .visualizer import Visualizer

__all__ = [
    "BaseVisBackend",
    "ClearMLVisBackend",
    "DVCLiveVisBackend",
    "HistoryBuffer",
    "LocalVisBackend",
    "LogProcessor",
    "MLflowVisBackend",
    "MMLogger",
    "MessageHub",
    "ProgressBar",
    "ScalarRecorder",
    "TensorboardVisBackend",
    "Visualizer",
    "WandbVisBackend",
    "get_logger",
    "get_run_logger",
    "make_logger_current",
    "print_log",
]
