"""The model steps of a wrapped model: what the train loop calls on ``runner.model``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn


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
        with context:
            data = module.data_preprocessor(data, True)
            losses = self._run_forward(data, mode="loss")
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
        raise TypeError(
            "the data preprocessor must return a dict (keyword arguments of forward) or a list "
            f"or tuple (positional arguments), but returned {type(data).__name__}"
        )


def report_parameters_without_gradient(loss: torch.Tensor, module: nn.Module) -> list[str]:
    """Log (as errors) and return the trainable parameters of ``module`` that ``loss`` does
    not depend on: MMEngine's ``detect_anomalous_params``, a debugging aid that walks the
    autograd graph on every step."""
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
        for name, param in module.named_parameters()
        if param.requires_grad and id(param) not in reached
    ]
    if unused:
        logging.getLogger("runnerx").error(
            "detect_anomalous_params: these trainable parameters get no gradient from the loss: "
            "%s; freeze them (requires_grad=False) or use them in the loss",
            ", ".join(unused),
        )
    return unused
