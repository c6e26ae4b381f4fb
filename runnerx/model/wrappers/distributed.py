"""MMEngine's ``mmengine.model.wrappers.distributed`` path: ``MMDistributedDataParallel`` is
:class:`runnerx.parallel.ddp.DistributedDataParallelModel`."""

from runnerx.parallel.ddp import DistributedDataParallelModel as MMDistributedDataParallel

__all__ = ["MMDistributedDataParallel"]
