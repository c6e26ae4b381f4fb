"""MMEngine's ``mmengine.model.wrappers.seperate_distributed`` path (MMEngine's spelling):
``MMSeparateDistributedDataParallel`` is
:class:`runnerx.parallel.separate_ddp.SeparateDistributedDataParallelModel`."""

from runnerx.parallel.separate_ddp import (
    SeparateDistributedDataParallelModel as MMSeparateDistributedDataParallel,
)

__all__ = ["MMSeparateDistributedDataParallel"]
