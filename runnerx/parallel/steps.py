"""The model steps of a wrapped model: what the train loop calls on ``runner.model``."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.model.base_model.forward_errors import batch_form_error


class WrappedModelSteps:
    """``train_step`` / ``val_step`` / ``test_step`` for a wrapper (DDP, FSDP, DataParallel)
    around a ``BaseModel`` held as ``self.module``, as MMEngine's MMDistributedDataParallel
    has them.

    ``train_step`` runs the wrapped model's data preprocessor, then the forward pass *through
    the wrapper* (so DDP prepares its gradient all-reduce), inside
    ``optim_wrapper.optim_context(self)`` (autocast; ``self.no_sync()`` on accumulation
    micro-steps), then ``parse_losses`` and ``optim_wrapper.update_params``. Validation and
    test run the wrapped model's own ``val_step`` / ``test_step``.
    """

    module: nn.Module
    detect_anomalous_params = False

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        """One optimisation step on a batch; returns the log variables."""
        module = self.module
        try:
            context = optim_wrapper.optim_context(self)
        except NotImplementedError:
            if not hasattr(optim_wrapper, "items"):
                raise
            # an OptimWrapperDict: the model steps its optimizers itself
            raise TypeError(
                f"{type(self).__name__} runs one optimizer's step, but the optim wrapper holds "
                f"several ({', '.join(optim_wrapper.keys())}): a model with its own train_step "
                "for them (a GAN) trains on several ranks with model_wrapper_cfg=dict("
                "type='MMSeparateDistributedDataParallel'), which calls that train_step"
            ) from None
        try:
            with context:
                data = module.data_preprocessor(data, True)
                losses = self._run_forward(data, mode="loss")
        except RuntimeError as error:
            explained = explain_unused_parameters(self, error)
            if explained is None:
                raise
            raise explained from error
        loss, log_vars = module.parse_losses(losses)
        if self.detect_anomalous_params:
            report_parameters_without_gradient(loss, module)
        optim_wrapper.update_params(loss)
        return log_vars

    def val_step(self, data: Any) -> Any:
        """The wrapped model's ``val_step``."""
        return self.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        """The wrapped model's ``test_step``."""
        return self.module.test_step(data)

    def _run_forward(self, data: Any, mode: str) -> Any:
        """Call the wrapper on a preprocessed batch (a dict of keyword arguments, or a list or
        tuple of positional ones)."""
        if isinstance(data, Mapping):
            return self(**data, mode=mode)
        if isinstance(data, (list, tuple)):
            return self(*data, mode=mode)
        raise batch_form_error(data)


#: torch's DDP error when a parameter got no gradient (torch 2.x, all releases seen)
_UNFINISHED_REDUCTION = "Expected to have finished reduction in the prior iteration"
#: where that error gives the parameters (by index; by name too under TORCH_DISTRIBUTED_DEBUG)
_UNUSED_INDICES = re.compile(r"Parameter indices which did not receive grad for rank \d+: ([\d ]+)")


def explain_unused_parameters(model: nn.Module, error: RuntimeError) -> RuntimeError | None:
    """For DDP's error about parameters without a gradient (``model`` a DDP wrapper without
    ``find_unused_parameters``), an error naming those parameters and runnerx's config keys;
    None for any other error."""
    if _UNFINISHED_REDUCTION not in str(error) or getattr(model, "find_unused_parameters", True):
        return None
    if getattr(model, "static_graph", False):
        return None  # torch's message (the graph changed between steps) is the right one
    names = _unused_parameter_names(model, str(error))
    which = f"parameters {', '.join(names)} got" if names else "some parameters got"
    return RuntimeError(
        f"DDP: {which} no gradient in the previous step (the loss does not depend on them). "
        "Set find_unused_parameters=True: at the top level of the config, or in the strategy "
        "or model_wrapper_cfg when the config sets one (strategy=dict(type='DDP', "
        "find_unused_parameters=True), model_wrapper_cfg=dict(type='MMDistributedDataParallel', "
        "find_unused_parameters=True)); or freeze them (requires_grad=False) if they are not "
        "to be trained"
    )


def _unused_parameter_names(model: nn.Module, message: str) -> list[str]:
    """The parameter indices in DDP's message as names (DDP numbers the trainable parameters
    in ``named_parameters`` order, leaving out the ones it was told to ignore)."""
    indexed = _UNUSED_INDICES.search(message)
    if not indexed:
        return []
    ignored = getattr(model, "parameters_to_ignore", ())
    trainable = [
        name
        for name, param in model.module.named_parameters()
        if param.requires_grad and name not in ignored
    ]
    indices = [int(index) for index in indexed.group(1).split()]
    return [trainable[index] for index in indices if index < len(trainable)]


def report_parameters_without_gradient(loss: torch.Tensor, model: nn.Module) -> list[str]:
    """Log (as errors) and return the trainable parameters of ``model`` that ``loss`` does
    not depend on: MMEngine's ``detect_anomalous_params(loss, model=...)``, a debugging aid
    that walks the autograd graph on every step."""
    reached: set[int] = set()
    pending = [loss.grad_fn]
    seen: set[int] = set()
    while pending:
        node = pending.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        pending.extend(next_node for next_node, _ in node.next_functions)
    unused = [
        name
        for name, param in model.named_parameters()
        if param.requires_grad and id(param) not in reached
    ]
    if unused:
        logging.getLogger("runnerx").error(
            "detect_anomalous_params: these trainable parameters get no gradient from the loss: "
            "%s; freeze them (requires_grad=False) or use them in the loss",
            ", ".join(unused),
        )
    return unused
