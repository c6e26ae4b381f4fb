"""MMEngine's ``mmengine.analysis.print_helper`` path: ``get_model_complexity_info`` (see
:mod:`runnerx.analysis.complexity`) and ``_format_size``, which the ``get_flops.py`` tools of
OpenMMLab's repositories import from here."""

from .complexity import get_model_complexity_info
from .report import format_size as _format_size  # noqa: F401 (the tools import it here)

__all__ = ["get_model_complexity_info"]
