"""MMEngine's ``mmengine.optim.optimizer.default_constructor`` path:
``DefaultOptimWrapperConstructor``, the base class of custom constructors."""

from runnerx.optim.constructor import DefaultOptimWrapperConstructor

__all__ = ["DefaultOptimWrapperConstructor"]
