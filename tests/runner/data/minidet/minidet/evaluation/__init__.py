from .metric import BoxIoUAccuracy

__all__ = ["BoxIoUAccuracy"]
