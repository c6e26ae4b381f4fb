"""MMEngine's ``mmengine.runner.base_loop`` path: :class:`~runnerx.runner.loops.BaseLoop`,
the base of custom loops (``from runnerx.runner.base_loop import BaseLoop``)."""

from .loops import BaseLoop

__all__ = ["BaseLoop"]
