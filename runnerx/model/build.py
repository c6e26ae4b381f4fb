"""build_model: what a Runner's ``model`` argument becomes before it is prepared for devices."""

from __future__ import annotations

import sys

from torch import nn

from runnerx.config import ConfigDict
from runnerx.registry import MODELS
from runnerx.suggest import given

from .base_model.base_model import check_forward_takes_mode
from .lightning_methods import warn_of_lightning_methods


def build_model(
    model: nn.Module | dict, data_preprocessor: dict | None = None, init_weights: bool = True
) -> nn.Module:
    """The module a Runner trains: a config dict built from MODELS (given the Runner's
    ``data_preprocessor`` when the dict names none), or a module as it is; then, with
    ``init_weights``, its ``init_weights()`` (a Runner skips that when weights are loaded).
    A BaseModel whose ``forward`` takes no ``mode`` is refused here, before training, and so
    is a model already wrapped (DDP, DataParallel, FSDP) or sharded by ``fully_shard``: the
    Runner wraps or shards it itself. LightningModule methods on the model, which nothing
    calls (``training_step``, ``on_validation_epoch_end``, ...), get a logged warning.

    .. code-block:: python

        model = build_model(dict(type='DigitsConvNet'))
    """
    if isinstance(model, dict):
        model = ConfigDict(model) if not isinstance(model, ConfigDict) else model
        if data_preprocessor is not None:
            model.setdefault("data_preprocessor", data_preprocessor)
        model = MODELS.build(model)
    elif not isinstance(model, nn.Module):
        got = given(model) if isinstance(model, type) else type(model)
        raise TypeError(f"model must be an nn.Module or a config dict, got {got}")
    else:
        _refuse_wrapped(model)
    check_forward_takes_mode(model)
    warn_of_lightning_methods(getattr(model, "_orig_mod", model))
    if init_weights and callable(getattr(model, "init_weights", None)):
        model.init_weights()
    return model


def _refuse_wrapped(model: nn.Module) -> None:
    """Refuse a model in a wrapper (itself or under ``torch.compile``) or sharded by
    ``fully_shard``: its steps, state dict keys and the wrapping for the run belong to the
    Runner."""
    from runnerx.parallel.unwrap import is_model_wrapper

    compiled = type(model).__name__ == "OptimizedModule"
    inner = getattr(model, "_orig_mod", model) if compiled else model
    if is_model_wrapper(inner) or isinstance(inner, _fsdp1_classes()):
        raise TypeError(
            f"model is already wrapped in {type(inner).__name__}; pass the model itself "
            "(.module): the Runner wraps it as the run needs (launcher='pytorch' wraps it "
            "in DDP; strategy=... or model_wrapper_cfg=... choose another wrapper)"
        )
    sharded = _fully_sharded_names(inner)
    if sharded:
        raise TypeError(
            f"model is already sharded by fully_shard (at {sharded[0] or 'the root'}); pass "
            "it unsharded and let the Runner shard it: strategy=dict(type='FSDP', "
            "wrap_modules=[...]) applies fully_shard to those blocks, then to the root"
        )


def _fsdp_imported() -> bool:
    """Whether torch's FSDP was imported: no model can be wrapped or sharded by it otherwise,
    and a plain run need not import it for these checks."""
    return "torch.distributed.fsdp" in sys.modules


def _fully_sharded_names(model: nn.Module) -> list[str]:
    """The names of the modules of ``model`` that ``fully_shard`` was applied to."""
    if not _fsdp_imported():
        return []
    from runnerx.parallel.fsdp import is_fully_sharded

    return [name for name, module in model.named_modules() if is_fully_sharded(module)]


def _fsdp1_classes() -> tuple[type, ...]:
    """torch's FullyShardedDataParallel (FSDP1) where this torch has it and it was imported."""
    if not _fsdp_imported():
        return ()
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel
    except ImportError:
        return ()
    return (FullyShardedDataParallel,)
