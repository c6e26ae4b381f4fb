"""MMEngine's ``mmengine.optim.optimizer.base`` path: ``BaseOptimWrapper``.

runnerx's optim wrappers have one base class, :class:`~runnerx.optim.OptimWrapper`
(AmpOptimWrapper and OptimWrapperDict derive from it), so ``BaseOptimWrapper`` is that class:
``isinstance(wrapper, BaseOptimWrapper)`` holds for every runnerx wrapper, and a wrapper
written as ``class MyWrapper(BaseOptimWrapper)`` starts from OptimWrapper's
``update_params``, ``backward``, ``step`` and ``zero_grad`` (MMEngine's abstract methods)
and overrides what it needs.
"""

from runnerx.optim.optim_wrapper import OptimWrapper as BaseOptimWrapper

__all__ = ["BaseOptimWrapper"]
