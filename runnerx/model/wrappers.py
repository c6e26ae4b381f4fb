"""MMEngine's ``mmengine.model.wrappers`` path: ``is_model_wrapper``,
``MMDistributedDataParallel`` (runnerx's DDP wrapper with the model steps) and
``MMSeparateDistributedDataParallel`` (one DDP per sub-module), from :mod:`runnerx.parallel`,
where runnerx wraps models. FSDP is ``strategy='fsdp'`` (see docs/distributed.md)."""

from runnerx.parallel.ddp import DistributedDataParallelModel as MMDistributedDataParallel
from runnerx.parallel.separate_ddp import (
    SeparateDistributedDataParallelModel as MMSeparateDistributedDataParallel,
)
from runnerx.parallel.unwrap import is_model_wrapper

__all__ = ["MMDistributedDataParallel", "MMSeparateDistributedDataParallel", "is_model_wrapper"]
