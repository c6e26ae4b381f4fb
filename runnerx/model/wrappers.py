"""MMEngine's ``mmengine.model.wrappers`` path: ``is_model_wrapper`` and
``MMDistributedDataParallel`` (runnerx's DDP wrapper with the model steps), from
:mod:`runnerx.parallel`, where runnerx wraps models. FSDP is ``strategy='fsdp'`` (see
docs/distributed.md)."""

from runnerx.parallel.ddp import DistributedDataParallelModel as MMDistributedDataParallel
from runnerx.parallel.unwrap import is_model_wrapper

__all__ = ["MMDistributedDataParallel", "is_model_wrapper"]
