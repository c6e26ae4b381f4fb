"""MMEngine's ``mmengine.optim.optimizer.amp_optimizer_wrapper`` path: ``AmpOptimWrapper``."""

from runnerx.optim.amp_optim_wrapper import AmpOptimWrapper

__all__ = ["AmpOptimWrapper"]
