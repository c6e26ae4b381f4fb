"""BaseModel: the model contract the Runner trains, validates and tests (MMEngine's BaseModel)."""

from __future__ import annotations

import inspect
from abc import ABCMeta, abstractmethod
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.nn.modules import module as _torch_module

from runnerx.model.base_model.data_preprocessor import BaseDataPreprocessor
from runnerx.model.base_model.forward_errors import (
    add_note_or_log,
    batch_form_error,
    note_batch_form,
)
from runnerx.model.base_module import BaseModule
from runnerx.registry import MODELS

__all__ = ["BaseModel"]

# What nn.Module.__call__ looks at before it calls ``forward`` (feature-detected: without
# them, modules are always called through __call__).
_GLOBAL_HOOKS = tuple(
    getattr(_torch_module, name, None)
    for name in (
        "_global_backward_pre_hooks",
        "_global_backward_hooks",
        "_global_forward_hooks",
        "_global_forward_pre_hooks",
    )
)
_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
_CAN_CALL_FORWARD = (
    all(isinstance(hooks, dict) for hooks in _GLOBAL_HOOKS)
    and all(name in nn.Module().__dict__ for name in _HOOK_DICTS)
    and hasattr(nn.Module, "_compiled_call_impl")
)
_MODULE_CALL = nn.Module.__call__
_tracing_state = torch._C._get_tracing_state


class BaseModel(BaseModule, metaclass=ABCMeta):
    """Base class of models: implement ``forward(inputs, data_samples=None, mode='tensor')``.

    ``mode='loss'`` returns a dict of loss tensors (``train_step`` sums every entry whose key
    contains ``'loss'``), ``mode='predict'`` returns predictions for metrics (``val_step`` and
    ``test_step``), ``mode='tensor'`` returns raw outputs. Before ``forward``, the
    ``data_preprocessor`` (a config dict built with MODELS, or a module) moves the batch to
    the model's device::

        @MODELS.register_module()
        class MyNet(BaseModel):
            def __init__(self, data_preprocessor=None, init_cfg=None):
                super().__init__(data_preprocessor, init_cfg)
                self.fc = nn.Linear(4, 2)

            def forward(self, inputs, data_samples=None, mode='tensor'):
                logits = self.fc(inputs)
                if mode == 'loss':
                    return dict(loss=F.cross_entropy(logits, data_samples))
                if mode == 'predict':
                    return dict(pred_score=logits.softmax(-1), gt_label=data_samples)
                return logits
    """

    def __init__(
        self,
        data_preprocessor: Mapping | nn.Module | None = None,
        init_cfg: Mapping | list[Mapping] | None = None,
    ) -> None:
        super().__init__(init_cfg)
        if data_preprocessor is None:
            data_preprocessor = dict(type="BaseDataPreprocessor")
        if isinstance(data_preprocessor, nn.Module):
            self.data_preprocessor = data_preprocessor
        elif isinstance(data_preprocessor, Mapping):
            self.data_preprocessor = MODELS.build(data_preprocessor)
        else:
            raise TypeError(
                "data_preprocessor must be a config dict (e.g. dict(type='ImgDataPreprocessor', "
                f"...)) or an nn.Module, but got {type(data_preprocessor).__name__}"
            )

    @abstractmethod
    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        """Raw outputs (``'tensor'``), a dict of losses (``'loss'``) or predictions
        (``'predict'``) for a preprocessed batch."""

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        """One optimisation step on a batch; returns the log variables (detached 0-dim tensors,
        ``'loss'`` first).

        Preprocesses and runs ``forward(mode='loss')`` inside ``optim_wrapper.optim_context``
        (autocast, no gradient sync on accumulation steps), sums the losses with
        ``parse_losses`` and hands the total to ``optim_wrapper.update_params``.
        """
        with optim_wrapper.optim_context(self):
            data = self._preprocess(data, True)
            losses = self._run_forward(data, mode="loss")
        loss, log_vars = self.parse_losses(losses)
        try:
            optim_wrapper.update_params(loss)
        except RuntimeError as error:
            if not loss.requires_grad:  # torch's "does not require grad" names no loss
                _note_detached_loss(self, losses, error)
            raise
        return log_vars

    def val_step(self, data: Any) -> Any:
        """Predictions for a validation batch: what ``forward(mode='predict')`` returns."""
        data = self._preprocess(data, False)
        return self._run_forward(data, mode="predict")

    def test_step(self, data: Any) -> Any:
        """Predictions for a test batch: what ``forward(mode='predict')`` returns."""
        data = self._preprocess(data, False)
        return self._run_forward(data, mode="predict")

    def parse_losses(self, losses: Any) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Return the total loss (the sum of every entry whose key contains ``'loss'``) and the
        log variables: ``'loss'`` (the total) first, then every entry in order, detached.

        An entry is a tensor (averaged if it has more than one element) or a list of tensors
        (the sum of their averages; an empty list adds nothing and is logged as 0, as in
        MMEngine). Entries without ``'loss'`` in their key, such as an accuracy, are logged
        but not optimised. Nothing is read back from the device.
        """
        if type(losses) is dict and len(losses) == 1:  # the usual dict(loss=...): quickly
            loss = losses.get("loss")
            if type(loss) is torch.Tensor and loss.dim() == 0:
                return loss, {"loss": loss.detach()}
        if not isinstance(losses, Mapping):
            raise TypeError(
                f"{type(self).__name__}.forward(mode='loss') returned "
                f"{type(losses).__name__}, but it must return a dict of loss tensors, "
                "e.g. dict(loss=F.cross_entropy(logits, labels))"
            )
        values = {}  # None for an empty list
        for name, value in losses.items():
            if isinstance(value, torch.Tensor):
                values[name] = value if value.dim() == 0 else value.mean()
            elif isinstance(value, (list, tuple)) and _all_tensors(value):
                values[name] = sum(item.mean() for item in value) if value else None
            else:
                raise TypeError(
                    f"{type(self).__name__}.forward(mode='loss') returned a dict whose key "
                    f"{name!r} holds {_describe(value)}; every value must be a tensor or a "
                    "list of tensors (keys containing 'loss' are summed into the loss, the "
                    "others are only logged)"
                )
        loss_terms = [v for name, v in values.items() if "loss" in name and v is not None]
        if not loss_terms:
            empty = [name for name in values if "loss" in name]  # only empty lists
            why = (
                f"whose loss keys {empty} hold empty lists"
                if empty
                else "none of which contains 'loss'"
            )
            raise ValueError(
                f"{type(self).__name__}.forward(mode='loss') returned keys {list(values)}, "
                f"{why}, so there is nothing to optimise"
            )
        loss = loss_terms[0] if len(loss_terms) == 1 else sum(loss_terms)
        log_vars = {"loss": loss.detach()}
        for name, value in values.items():
            if name != "loss":
                log_vars[name] = loss.new_zeros(()) if value is None else value.detach()
        return loss, log_vars

    def _preprocess(self, data: Any, training: bool) -> Any:
        """``self.data_preprocessor(data, training)``, without nn.Module's detours."""
        preprocessor = self._modules.get("data_preprocessor")
        if preprocessor is None:  # not a submodule: whatever the attribute holds
            return self.data_preprocessor(data, training)
        call = call_module(preprocessor)
        if type(preprocessor) is BaseDataPreprocessor and call is not preprocessor:
            return preprocessor.cast_data(data)  # all its forward does, one call fewer
        return call(data, training)

    def _run_forward(self, data: Any, mode: str) -> Any:
        """Call the model on a preprocessed batch: ``self(**data)`` for a dict,
        ``self(*data)`` for a list or tuple. An error the batch's form probably caused (keys
        that are not forward's parameters, unstacked samples) gets a note saying so."""
        try:
            if type(data) is dict or isinstance(data, Mapping):
                return call_module(self)(**data, mode=mode)
            if isinstance(data, (list, tuple)):
                return call_module(self)(*data, mode=mode)
        except (TypeError, AttributeError) as error:
            note_batch_form(self, data, mode, error)
            raise
        raise batch_form_error(data)


def call_module(module: nn.Module) -> Any:
    """What to call to call ``module``: its ``forward`` when ``module(...)`` would do nothing
    else (no hooks, global or its own; not compiled; not traced by torch.jit), else the
    module itself. Saves nn.Module.__call__'s two extra Python frames on every step."""
    state = module.__dict__
    if (
        _CAN_CALL_FORWARD
        and not (
            state["_forward_hooks"]
            or state["_forward_pre_hooks"]
            or state["_backward_hooks"]
            or state["_backward_pre_hooks"]
            or _GLOBAL_HOOKS[0]
            or _GLOBAL_HOOKS[1]
            or _GLOBAL_HOOKS[2]
            or _GLOBAL_HOOKS[3]
        )
        and module._compiled_call_impl is None
        and type(module).__call__ is _MODULE_CALL
        and not _tracing_state()
    ):
        return module.forward
    return module


def check_forward_takes_mode(model: nn.Module) -> None:
    """Refuse, when the model is built, a BaseModel whose ``forward`` cannot take ``mode``
    although BaseModel's own ``train_step`` / ``val_step`` / ``test_step`` pass it (without
    this check the first step fails with Python's bare "unexpected keyword argument")."""
    if not isinstance(model, BaseModel):
        return
    kind = type(model)
    steps = [
        name
        for name in ("train_step", "val_step", "test_step")
        if getattr(kind, name) is getattr(BaseModel, name)
    ]
    try:
        signature = inspect.signature(model.forward)
    except (TypeError, ValueError):  # a forward without a signature: left to the call
        return
    parameters = signature.parameters.values()
    if not steps or any(p.name == "mode" or p.kind is p.VAR_KEYWORD for p in parameters):
        return
    raise TypeError(
        f"{kind.__name__}.forward{signature} takes no 'mode' argument, but BaseModel's "
        f"{', '.join(steps)} call forward(**data, mode=...) with 'loss' (training) or "
        "'predict' (validation, test); add mode='tensor' to forward's arguments and return a "
        "dict of losses for 'loss' (see runnerx.model.BaseModel), or override those steps"
    )


def _note_detached_loss(model: nn.Module, losses: Mapping, error: BaseException) -> None:
    """Add to ``error`` (raised by the backward of a loss without a graph) which loss keys
    were summed and what detaches a loss."""
    name = type(model).__name__
    summed = [key for key, value in losses.items() if "loss" in key and _has_values(value)]
    if not any(parameter.requires_grad for parameter in model.parameters()):
        why = f"every parameter of {name} is frozen (requires_grad=False)"
    else:
        why = (
            "no term of it depends on a trainable parameter through autograd: a loss made "
            "with .detach(), .item() (or float()/numpy()), or computed under torch.no_grad() "
            "or inference_mode(), or from frozen parameters only"
        )
    note = (
        f"{name}.forward(mode='loss') returned a loss without a graph (requires_grad=False): "
        f"train_step summed the keys {summed} into it, and {why}"
    )
    add_note_or_log(error, note)


def _has_values(value: Any) -> bool:
    """Whether a ``parse_losses`` entry adds to the loss (an empty list adds nothing)."""
    return isinstance(value, torch.Tensor) or bool(value)


def _all_tensors(items: list | tuple) -> bool:
    return all(isinstance(item, torch.Tensor) for item in items)


def _describe(value: Any) -> str:
    """``value``'s type, and for a list or tuple the types of its items: 'list of float, int'."""
    if isinstance(value, (list, tuple)):
        kinds = sorted({type(item).__name__ for item in value})
        return f"{type(value).__name__} of {', '.join(kinds)}"
    return type(value).__name__
