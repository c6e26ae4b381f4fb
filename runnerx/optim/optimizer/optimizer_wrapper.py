"""MMEngine's ``mmengine.optim.optimizer.optimizer_wrapper`` path: ``OptimWrapper``."""

from runnerx.optim.optim_wrapper import OptimWrapper

__all__ = ["OptimWrapper"]
