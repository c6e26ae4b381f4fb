"""MMEngine's ``mmengine.runner.amp`` path: runnerx's ``autocast`` (see
:mod:`runnerx.optim.amp_optim_wrapper`)."""

from runnerx.optim.amp_optim_wrapper import autocast

__all__ = ["autocast"]
