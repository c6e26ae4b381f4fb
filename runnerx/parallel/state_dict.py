"""Model and optimizer state dicts that work whatever the wrapper (plain, DDP, FSDP).

A *full* state dict holds whole tensors on the CPU, keyed as the plain model's
``state_dict()``, so the file it is saved in loads anywhere (one process, another number of
GPUs, ``load_from``). Under FSDP it is gathered to rank 0 (the other ranks get an empty
dict: only rank 0 writes the file) and the optimizer's state is keyed by parameter name
instead of by index; both kinds load back into any model through the ``load_*`` functions.
A *sharded* state dict (``full=False``) keeps each rank's shards (DTensors) for
:mod:`runnerx.parallel.sharded_checkpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from .fsdp import fsdp_units, is_fully_sharded, reshard
from .unwrap import unwrap

_OPTIMIZER_KEYS = ("state", "param_groups")


def _options(full: bool, **kwargs: Any) -> Any:
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(full_state_dict=full, cpu_offload=full, **kwargs)


def model_state_dict(model: nn.Module, full: bool = True) -> dict[str, Any]:
    """The state dict of the model inside ``model``'s wrappers: full tensors on the CPU
    (under FSDP: on rank 0, the other ranks get ``{}``), or with ``full=False`` as they are
    (each rank's shards under FSDP). Every rank must call it under FSDP."""
    module = unwrap(model)
    if is_fully_sharded(module):
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        reshard(fsdp_units(module))
        return get_model_state_dict(module, options=_options(full))
    state = module.state_dict()
    if full:
        return {key: value.detach().cpu() for key, value in state.items()}
    return state


def load_model_state_dict(
    model: nn.Module, state: Mapping[str, Any], strict: bool = False
) -> tuple[list[str], list[str]]:
    """Load a model state dict (full, or sharded as :func:`model_state_dict` made it) into
    the model inside ``model``'s wrappers; return the (missing, unexpected) keys. Under FSDP
    every rank must call it with the full dict (each takes its own shards)."""
    module = unwrap(model)
    if is_fully_sharded(module):
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        reshard(fsdp_units(module))
        full = not _holds_dtensors(state.values())
        result = set_model_state_dict(module, dict(state), options=_options(full, strict=strict))
    else:
        result = module.load_state_dict(state, strict=strict)
    return list(result.missing_keys), list(result.unexpected_keys)


def optimizer_state_dict(model: nn.Module, optim_wrapper: Any, full: bool = True) -> dict:
    """``optim_wrapper.state_dict()`` (an OptimWrapper, OptimWrapperDict or torch optimizer).

    Under FSDP, and always with ``full=False`` (for sharded checkpoints), the optimizer part
    is keyed by parameter name (``torch.distributed.checkpoint.state_dict``), full on rank 0
    or sharded; otherwise it is the plain, index-keyed state dict."""
    if _is_wrapper_dict(optim_wrapper):
        return {
            name: optimizer_state_dict(model, wrapper, full)
            for name, wrapper in optim_wrapper.items()
        }
    state = optim_wrapper.state_dict()
    module = unwrap(model)
    if full and not is_fully_sharded(module):
        return state  # keyed by index, as MMEngine saves it
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    optimizer = getattr(optim_wrapper, "optimizer", optim_wrapper)
    extras = {key: value for key, value in state.items() if key not in _OPTIMIZER_KEYS}
    reshard(fsdp_units(module))
    return {**get_optimizer_state_dict(module, optimizer, options=_options(full)), **extras}


def load_optimizer_state_dict(model: nn.Module, optim_wrapper: Any, state: Mapping) -> None:
    """Load what :func:`optimizer_state_dict` returned (or a plain ``optimizer.state_dict()``)
    into ``optim_wrapper``, whether its model is sharded or not, and whether the state was
    saved from a sharded model (keyed by name) or not (keyed by index)."""
    if _is_wrapper_dict(optim_wrapper):
        for name, wrapper in optim_wrapper.items():
            load_optimizer_state_dict(model, wrapper, state[name])
        return
    module = unwrap(model)
    by_name = _keyed_by_name(state)
    if not is_fully_sharded(module) and not by_name:
        optim_wrapper.load_state_dict(state)
        return
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    optimizer = getattr(optim_wrapper, "optimizer", optim_wrapper)
    reshard(fsdp_units(module))
    optimizer_state = {key: state[key] for key in _OPTIMIZER_KEYS}
    if not by_name:
        optimizer_state = _index_keys_to_names(module, optimizer, optimizer_state)
    full = not _holds_dtensors(
        value for entry in optimizer_state["state"].values() for value in entry.values()
    )
    set_optimizer_state_dict(module, optimizer, optimizer_state, options=_options(full))
    extras = {key: value for key, value in state.items() if key not in _OPTIMIZER_KEYS}
    if extras:  # e.g. AmpOptimWrapper's loss scaler: loaded by the wrapper itself
        optim_wrapper.load_state_dict({**optimizer.state_dict(), **extras})


def _is_wrapper_dict(optim_wrapper: Any) -> bool:
    from runnerx.optim import OptimWrapperDict

    return isinstance(optim_wrapper, OptimWrapperDict)


def _keyed_by_name(state: Mapping) -> bool:
    """Whether an optimizer state dict names its parameters (FSDP's) or numbers them."""
    return any(
        isinstance(param, str)
        for group in state.get("param_groups", ())
        for param in group["params"]
    )


def _index_keys_to_names(module: nn.Module, optimizer: Any, state: Mapping) -> dict:
    """A plain optimizer state dict (parameters numbered in the optimizer's order) keyed by
    the parameter names of ``module`` instead, as FSDP's state dict functions expect."""
    names = {param: name for name, param in module.named_parameters()}
    order = [names[param] for group in optimizer.param_groups for param in group["params"]]
    return {
        "state": {order[index]: value for index, value in state["state"].items()},
        "param_groups": [
            {**group, "params": [order[index] for index in group["params"]]}
            for group in state["param_groups"]
        ],
    }


def _holds_dtensors(values: Any) -> bool:
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # torch 2.4
        from torch.distributed._tensor import DTensor
    return any(isinstance(value, DTensor) for value in values if isinstance(value, torch.Tensor))
