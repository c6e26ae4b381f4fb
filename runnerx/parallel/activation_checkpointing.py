"""Activation checkpointing: keep fewer activations, recompute them in the backward pass.

.. code-block:: python

    activation_checkpointing = dict(modules=['TransformerBlock'])   # every block of a class
    activation_checkpointing = ['backbone.layer1', 'backbone.layer2']  # MMEngine's: by path

Each matching module runs its ``forward`` through non-reentrant ``torch.utils.checkpoint``:
its inner activations are dropped after the forward pass and recomputed when the backward
pass needs them (less memory, about one more forward of compute). The module keeps its
parameters, names and state dict; only its class becomes a ``Checkpointed<Name>`` subclass,
so ``isinstance`` checks, parameter-wise optimizer settings and EMA copies keep working.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from runnerx.suggest import did_you_mean

from .module_match import find_modules
from .options import as_dict, check_keys

_CHECKPOINTED: dict[type, type] = {}


def apply_activation_checkpointing(model: nn.Module, cfg: Any) -> list[nn.Module]:
    """Checkpoint the sub-modules ``cfg['modules']`` names (in place) and return them;
    ``cfg`` None or False checkpoints nothing. A str or a list of strs is MMEngine's form:
    the attribute paths of the sub-modules (``['backbone.layer1', 'backbone.layer2']``)."""
    if cfg is None or cfg is False:
        return []
    if isinstance(cfg, str) or (
        isinstance(cfg, (list, tuple)) and cfg and all(isinstance(name, str) for name in cfg)
    ):
        names = [cfg] if isinstance(cfg, str) else list(cfg)
        where = [f"activation_checkpointing[{index}]" for index in range(len(names))]
        modules = [_submodule(model, name, key) for name, key in zip(names, where)]
        for module in modules:
            _checkpoint_in_place(module)
        return modules
    cfg = as_dict(cfg, "activation_checkpointing", "dict(modules=['TransformerBlock'])")
    check_keys(cfg, ("modules",), "activation_checkpointing")
    if "modules" not in cfg:
        raise KeyError(
            "activation_checkpointing needs modules=[...]: the classes of the blocks to "
            "recompute, e.g. dict(modules=['TransformerBlock'])"
        )
    modules = find_modules(model, cfg["modules"], "activation_checkpointing.modules")
    for module in modules:
        _checkpoint_in_place(module)
    return modules


def turn_on_activation_checkpointing(model: nn.Module, modules: str | list[str]) -> None:
    """Checkpoint the sub-modules of ``model`` at the attribute paths ``modules`` names
    (``'backbone.layer1'``; MMEngine's function), as ``activation_checkpointing`` does."""
    for name in [modules] if isinstance(modules, str) else modules:
        _checkpoint_in_place(_submodule(model, name, "turn_on_activation_checkpointing"))


def _submodule(model: nn.Module, name: str, where: str) -> nn.Module:
    """The sub-module at the attribute path ``name``, or an error naming ``where`` and the
    closest paths the model has."""
    try:
        return model.get_submodule(name)
    except AttributeError as error:
        paths = [path for path, _ in model.named_modules() if path]
        raise AttributeError(
            f"{where}: {type(model).__name__} has no sub-module {name!r} ({error})"
            f"{did_you_mean(name, paths)}"
        ) from None


def _checkpoint_in_place(module: nn.Module) -> None:
    if not getattr(module, "_runnerx_checkpointed", False):
        module.__class__ = checkpointed_class(type(module))


def checkpointed_class(cls: type) -> type:
    """A subclass of ``cls`` whose ``forward`` runs under ``torch.utils.checkpoint`` (one per
    class, made once)."""
    if cls not in _CHECKPOINTED:

        def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
            parent_forward = super(subclass, self).forward
            if not torch.is_grad_enabled():  # nothing to save for a backward pass
                return parent_forward(*args, **kwargs)
            return checkpoint(parent_forward, *args, use_reentrant=False, **kwargs)

        subclass = type(
            f"Checkpointed{cls.__name__}",
            (cls,),
            {"forward": forward, "_runnerx_checkpointed": True, "__module__": cls.__module__},
        )
        _CHECKPOINTED[cls] = subclass
    return _CHECKPOINTED[cls]
