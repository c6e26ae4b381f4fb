from .inferencer import MiniDetInferencer

__all__ = ["MiniDetInferencer"]
