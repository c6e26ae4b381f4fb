"""Finding the user's model inside the wrappers (DDP, DataParallel, FSDP, compile)."""

from __future__ import annotations

from torch import nn

from runnerx.registry import MODEL_WRAPPERS, Registry


def is_model_wrapper(model: nn.Module, registry: Registry = MODEL_WRAPPERS) -> bool:
    """Whether ``model`` wraps another model in ``.module``: DDP, DataParallel, or a class
    registered in ``registry`` or its children (MMEngine's function)."""
    wrappers = (
        nn.parallel.DistributedDataParallel,
        nn.DataParallel,
        *(kind for kind in registry.module_dict.values() if isinstance(kind, type)),
    )
    if isinstance(model, wrappers):
        return True
    return any(is_model_wrapper(model, child) for child in registry.children.values())


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside ``model``'s wrappers: ``.module`` of each :func:`is_model_wrapper`
    wrapper; ``._orig_mod`` of ``torch.compile(model)``."""
    while True:
        if is_model_wrapper(model):
            model = model.module
        elif type(model).__name__ == "OptimizedModule" and hasattr(model, "_orig_mod"):
            model = model._orig_mod
        else:
            return model
