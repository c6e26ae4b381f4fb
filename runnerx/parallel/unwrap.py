"""Finding the user's model inside the wrappers (DDP, DataParallel, FSDP, compile)."""

from __future__ import annotations

from torch import nn

from runnerx.registry import MODEL_WRAPPERS


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside ``model``'s wrappers: ``.module`` of DDP, DataParallel and every
    class registered in ``MODEL_WRAPPERS``; ``._orig_mod`` of ``torch.compile(model)``."""
    wrappers = (
        nn.parallel.DistributedDataParallel,
        nn.DataParallel,
        *(kind for kind in MODEL_WRAPPERS.module_dict.values() if isinstance(kind, type)),
    )
    while True:
        if isinstance(model, wrappers):
            model = model.module
        elif type(model).__name__ == "OptimizedModule" and hasattr(model, "_orig_mod"):
            model = model._orig_mod
        else:
            return model
