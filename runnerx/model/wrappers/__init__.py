"""MMEngine's ``mmengine.model.wrappers`` path: ``is_model_wrapper``,
``MMDistributedDataParallel`` (runnerx's DDP wrapper with the model steps) and
``MMSeparateDistributedDataParallel`` (one DDP per sub-module), from :mod:`runnerx.parallel`,
where runnerx wraps models; the submodules carry MMEngine's file names (``distributed``,
``seperate_distributed``, ``utils``). FSDP is ``strategy='fsdp'`` (see docs/distributed.md)."""

from .distributed import MMDistributedDataParallel
from .seperate_distributed import MMSeparateDistributedDataParallel
from .utils import is_model_wrapper

__all__ = ["MMDistributedDataParallel", "MMSeparateDistributedDataParallel", "is_model_wrapper"]
