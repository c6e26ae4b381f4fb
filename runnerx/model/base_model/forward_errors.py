"""Notes for an error that ``forward`` raised because of the batch's form, added where
BaseModel calls ``forward`` (only once something has raised: nothing runs on a good step).

Two forms trip up users who come from Lightning or plain PyTorch (and a LightningModule
attribute the model lacks, ``self.log``, ``self.device``, ..., gets the runnerx way):

- the batch's keys are not ``forward``'s parameters (``dict(x=..., y=...)``), so Python
  says only "unexpected keyword argument 'x'";
- a batch value is a list of per-sample tensors (``pseudo_collate``, the default
  ``collate_fn``, stacks nothing), so torch says "must be Tensor, not list".
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn


def note_batch_form(model: nn.Module, data: Any, mode: str, error: BaseException) -> None:
    """Add to ``error`` (raised calling ``model.forward`` with ``data``) what about the
    batch's form probably caused it, if anything did; on Python 3.10, which has no
    exception notes, log it as an error instead."""
    note = (
        _lightning_attribute_note(model, error)
        or _mismatch_note(model, data, mode, error)
        or _unstacked_note(data, error)
    )
    if note is not None:
        add_note_or_log(error, note)


def add_note_or_log(error: BaseException, note: str) -> None:
    """Add ``note`` to ``error``; on Python 3.10, which has no exception notes, log it as an
    error through the current logger instead."""
    add_note = getattr(error, "add_note", None)
    if add_note is not None:
        add_note(note)
    else:
        from runnerx.logging import print_log

        print_log(note, logger="current", level=logging.ERROR)


#: LightningModule attributes a BaseModel lacks -> what a forward uses instead
_LIGHTNING_ATTRIBUTES = {
    "log": "return the value in forward's loss dict (mode='loss'; logged as train/<key>) or "
    "call MessageHub.get_current_instance().update_scalar('train/<name>', value); a "
    "validation value is a metric's result",
    "device": "use self.data_preprocessor.device",
    "current_epoch": "use MessageHub.get_current_instance().get_info('epoch') (0-based)",
    "global_step": "use MessageHub.get_current_instance().get_info('iter') (batches, 0-based)",
    "logger": "use Visualizer.get_current_instance(); .get_backend('TensorboardVisBackend')"
    ".experiment is TensorBoard's SummaryWriter",
}
_LIGHTNING_ATTRIBUTES["log_dict"] = _LIGHTNING_ATTRIBUTES["log"]
_NO_ATTRIBUTE = re.compile(r"object has no attribute '(\w+)'")


def _lightning_attribute_note(model: nn.Module, error: BaseException) -> str | None:
    """A note when the model lacks a LightningModule attribute that forward used."""
    found = _NO_ATTRIBUTE.search(str(error)) if isinstance(error, AttributeError) else None
    if found is None or found.group(1) not in _LIGHTNING_ATTRIBUTES:
        return None
    name = found.group(1)
    if f"'{type(model).__name__}' object" not in str(error):
        return None
    return (
        f"self.{name} is a LightningModule attribute that a runnerx model lacks: "
        f"{_LIGHTNING_ATTRIBUTES[name]} (docs/lightning.md, 'The model')"
    )


def batch_form_error(data: Any) -> TypeError:
    """The error for a preprocessed batch that is neither a dict nor a list or tuple; a bare
    tensor (``DataLoader(x)``, common for predict loaders) gets the cure."""
    cure = ""
    if isinstance(data, torch.Tensor):
        cure = (
            " (a DataLoader over a bare tensor, DataLoader(x), gives one): make its samples "
            "tuples, DataLoader(TensorDataset(x)) for forward(x, mode=...), or dicts, a "
            "dataset returning dict(inputs=x[i]) for forward(inputs, mode=...)"
        )
    return TypeError(
        "the data preprocessor must return a dict (keyword arguments of forward) or a list "
        f"or tuple (positional arguments), but returned {type(data).__name__}{cure}"
    )


def _mismatch_note(model: nn.Module, data: Any, mode: str, error: BaseException) -> str | None:
    """A note when the batch cannot be bound to ``forward``'s parameters at all."""
    if not isinstance(error, TypeError):
        return None
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):  # a forward without a signature: nothing to compare
        return None
    keyed = isinstance(data, Mapping)
    try:
        if keyed:
            signature.bind(**data, mode=mode)
        else:
            signature.bind(*data, mode=mode)
    except TypeError:
        pass
    else:
        return None
    forward = f"{type(model).__name__}.forward{signature}"
    if keyed:
        return (
            f"the batch is a dict with keys {list(data)}, which BaseModel passes to forward as "
            f"keyword arguments (forward(**batch, mode={mode!r})), but they do not match "
            f"{forward}; return dict(inputs=..., data_samples=...) from the dataset (the "
            "convention), or name forward's parameters after the batch's keys"
        )
    return (
        f"the batch is a {type(data).__name__} of {len(data)} items, which BaseModel passes to "
        f"forward positionally (forward(*batch, mode={mode!r})), but they do not match "
        f"{forward}; return dict(inputs=..., data_samples=...) from the dataset (the "
        "convention), or give forward one parameter per item"
    )


def _unstacked_note(data: Any, error: BaseException) -> str | None:
    """A note when the error is about a list (or tuple) and a batch value is a list of
    tensors, as ``pseudo_collate`` makes it."""
    if not isinstance(error, (TypeError, AttributeError)):
        return None
    text = str(error)
    if "list" not in text and "tuple" not in text:
        return None
    items = data.items() if isinstance(data, Mapping) else enumerate(data)
    for key, value in items:
        if not _is_tensor_list(value):
            continue
        name = repr(key) if isinstance(data, Mapping) else f"item {key}"
        shapes = {tuple(tensor.shape) for tensor in value}
        shape = f"of shape {shapes.pop()}" if len(shapes) == 1 else "of different shapes"
        return (
            f"the batch's {name} is a {type(value).__name__} of {len(value)} tensors {shape}, "
            "not one stacked tensor: the dataloader's collate_fn (pseudo_collate when the "
            "config names none, as in MMEngine) keeps the samples apart. To get stacked "
            "tensors, set collate_fn=dict(type='default_collate') in the dataloader config, "
            "or stack them in the model's data_preprocessor (ImgDataPreprocessor stacks and "
            "pads images)"
        )
    return None


def _is_tensor_list(value: Any) -> bool:
    return (
        isinstance(value, (list, tuple))
        and len(value) > 0
        and all(isinstance(item, torch.Tensor) for item in value)
    )
