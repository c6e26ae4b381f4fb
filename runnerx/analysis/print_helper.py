"""MMEngine's ``mmengine.analysis.print_helper`` path: ``get_model_complexity_info`` (see
:mod:`runnerx.analysis.complexity`)."""

from .complexity import get_model_complexity_info

__all__ = ["get_model_complexity_info"]
