"""MMEngine's ``mmengine.optim.optimizer.optimizer_wrapper_dict`` path: ``OptimWrapperDict``."""

from runnerx.optim.optim_wrapper_dict import OptimWrapperDict

__all__ = ["OptimWrapperDict"]
