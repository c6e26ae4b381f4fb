"""Registers every optimizer class of ``torch.optim`` in OPTIMIZERS under its class name.

Imported by the OPTIMIZERS registry on its first lookup, so a config can say
``optimizer=dict(type='AdamW', lr=1e-3)`` for any optimizer this torch version has.
"""

from __future__ import annotations

import torch

from runnerx.registry import OPTIMIZERS


def torch_optimizer_classes() -> dict[str, type[torch.optim.Optimizer]]:
    """Every optimizer class ``torch.optim`` exports, by name (the base class left out)."""
    found = {}
    for name in dir(torch.optim):
        obj = getattr(torch.optim, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, torch.optim.Optimizer)
            and obj is not torch.optim.Optimizer
        ):
            found[name] = obj
    return found


def register_torch_optimizers() -> list[str]:
    """Register the ``torch.optim`` optimizers; return the names registered.

    A name the user registered before this ran keeps the user's class. torch's Adafactor is
    also registered as ``'TorchAdafactor'``, the name MMEngine configs use for it.
    """
    registered = []
    for name, cls in torch_optimizer_classes().items():
        aliases = [name, "TorchAdafactor"] if name == "Adafactor" else [name]
        free = [alias for alias in aliases if alias not in OPTIMIZERS.module_dict]
        if free:
            OPTIMIZERS.register_module(name=free, module=cls)
            registered.extend(free)
    return registered


TORCH_OPTIMIZERS = register_torch_optimizers()
