"""Registers the optimizers a config can name: ``torch.optim``'s, and bitsandbytes' if installed.

Imported by the OPTIMIZERS registry on its first lookup, so a config can say
``optimizer=dict(type='AdamW', lr=1e-3)`` for any optimizer this torch version has, and
``optimizer=dict(type='AdamW8bit', lr=1e-3)`` where ``bitsandbytes`` is installed
(``pip install runnerx[bnb]``).
"""

from __future__ import annotations

import importlib.util
import warnings
from types import ModuleType

import torch

from runnerx.registry import OPTIMIZERS, Registry


def optimizer_classes(module: ModuleType) -> dict[str, type[torch.optim.Optimizer]]:
    """Every optimizer class ``module`` exports, by name (torch's base class left out)."""
    found = {}
    for name in dir(module):
        obj = getattr(module, name)
        if (
            isinstance(obj, type)
            and issubclass(obj, torch.optim.Optimizer)
            and obj is not torch.optim.Optimizer
        ):
            found[name] = obj
    return found


def register_torch_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register the ``torch.optim`` optimizers; return the names registered.

    A name the user registered before this ran keeps the user's class. torch's Adafactor is
    also registered as ``'TorchAdafactor'``, the name MMEngine configs use for it.
    """
    registered = []
    for name, cls in optimizer_classes(torch.optim).items():
        aliases = [name, "TorchAdafactor"] if name == "Adafactor" else [name]
        free = [alias for alias in aliases if alias not in registry.module_dict]
        if free:
            registry.register_module(name=free, module=cls)
            registered.extend(free)
    return registered


def register_bitsandbytes_optimizers(registry: Registry = OPTIMIZERS) -> list[str]:
    """Register bitsandbytes' optimizers (``AdamW8bit``, ``PagedAdamW8bit``, ...) if installed.

    As in MMEngine, one whose name is taken (``Adam``, ``SGD``, ...) is registered with a
    ``bnb_`` prefix (``bnb_Adam``). Returns the names registered; nothing when bitsandbytes
    is not installed, and a warning (not an error) when it is installed but fails to import.
    """
    if importlib.util.find_spec("bitsandbytes") is None:
        return []
    try:
        import bitsandbytes
    except Exception as err:  # a broken install should not stop runs that do not use it
        warnings.warn(
            f"bitsandbytes is installed but could not be imported ({type(err).__name__}: "
            f"{err}); its 8-bit optimizers are not registered",
            stacklevel=2,
        )
        return []
    registered = []
    for name, cls in optimizer_classes(bitsandbytes.optim).items():
        if name in registry.module_dict:
            if registry.module_dict[name] is cls:
                continue
            name = f"bnb_{name}"
        if name not in registry.module_dict:
            registry.register_module(name=name, module=cls)
            registered.append(name)
    return registered


TORCH_OPTIMIZERS = register_torch_optimizers()
BITSANDBYTES_OPTIMIZERS = register_bitsandbytes_optimizers()
