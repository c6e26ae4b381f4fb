from .visualizer import MiniDetVisualizer

__all__ = ["MiniDetVisualizer"]
