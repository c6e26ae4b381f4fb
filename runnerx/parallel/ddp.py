"""DistributedDataParallel with the model steps: MMEngine's MMDistributedDataParallel."""

from __future__ import annotations

import inspect
from typing import Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel

from runnerx.optim.checks import check_arguments
from runnerx.registry import MODEL_WRAPPERS

from .steps import WrappedModelSteps

_RENAMED_BROADCAST_BUFFERS = (
    "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters
)


@MODEL_WRAPPERS.register_module(
    name=["DistributedDataParallelModel", "MMDistributedDataParallel", "DistributedDataParallel"]
)
class DistributedDataParallelModel(WrappedModelSteps, DistributedDataParallel):
    """``torch.nn.parallel.DistributedDataParallel`` that the train loop can call
    ``train_step`` / ``val_step`` / ``test_step`` on (see :class:`WrappedModelSteps`).

    Every keyword argument of torch's DDP is accepted (``find_unused_parameters``,
    ``broadcast_buffers``, ``static_graph``, ``bucket_cap_mb``, ``gradient_as_bucket_view``,
    ...), so MMEngine's ``model_wrapper_cfg`` works as it is::

        model_wrapper_cfg = dict(type='MMDistributedDataParallel',
                                 find_unused_parameters=True, broadcast_buffers=False)

    Where torch has renamed ``broadcast_buffers`` to ``forward_sync_buffers`` (2.13), the old
    name is passed on as the new one (which, unlike the old, still copies rank 0's buffers
    once at the start).

    ``detect_anomalous_params=True`` logs, on every step, the trainable parameters the loss
    does not depend on (slow; for debugging). Gradient accumulation uses DDP's ``no_sync``.
    """

    def __init__(
        self, module: nn.Module, detect_anomalous_params: bool = False, **kwargs: Any
    ) -> None:
        check_ddp_options(kwargs, "strategy (DDP) or model_wrapper_cfg")
        if "broadcast_buffers" in kwargs and _RENAMED_BROADCAST_BUFFERS:
            kwargs.setdefault("forward_sync_buffers", kwargs.pop("broadcast_buffers"))
        super().__init__(module, **kwargs)
        self.detect_anomalous_params = detect_anomalous_params


def check_ddp_options(options: dict[str, Any], where: str) -> None:
    """Refuse an option that torch's DistributedDataParallel does not take, naming it."""
    keys = [key for key in options if key != "detect_anomalous_params"]
    check_arguments(DistributedDataParallel, keys, where, skip=1)
