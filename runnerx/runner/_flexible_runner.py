"""MMEngine's ``mmengine.runner._flexible_runner`` path, which its docs and examples import
``FlexibleRunner`` from (``from runnerx.runner import FlexibleRunner`` is the same class)."""

from .mmengine_api import FlexibleRunner

__all__ = ["FlexibleRunner"]
