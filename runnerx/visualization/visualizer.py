"""MMEngine's ``mmengine.visualization.visualizer`` path: runnerx's Visualizer (see
:mod:`runnerx.logging.visualizer`)."""

from runnerx.logging.visualizer import Visualizer

__all__ = ["Visualizer"]
