"""MMEngine's ``mmengine._strategy.fsdp`` path: runnerx's FSDPStrategy (FSDP2, see
:mod:`runnerx._strategy.distributed`)."""

from .distributed import FSDPStrategy

__all__ = ["FSDPStrategy"]
