"""MMEngine's ``mmengine.runner.log_processor`` path:
:class:`~runnerx.logging.log_processor.LogProcessor`, for subclasses that import it from
there."""

from runnerx.logging.log_processor import LogProcessor

__all__ = ["LogProcessor"]
