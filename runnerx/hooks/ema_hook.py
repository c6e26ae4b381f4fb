"""EMAHook: keeps an exponential moving average of the model's weights and evaluates with it."""

from __future__ import annotations

import inspect
import itertools
from typing import Any

import torch

from runnerx.checkpoint.ema_weights import swap_ema_weights
from runnerx.checkpoint.io import load_model_weights
from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS, MODELS
from runnerx.registry.build import did_you_mean_argument, lookup_type
from runnerx.registry.errors import NotRegisteredError
from runnerx.utils.errors import ValueAssertionError, ValueTypeError


@HOOKS.register_module()
class EMAHook(Hook):
    """Averages the weights after every training iteration; validation, testing and saved
    checkpoints use the averaged weights (MMEngine's EMAHook)::

        custom_hooks = [dict(type='EMAHook', momentum=0.0002, begin_epoch=1)]

    The average is built with ``MODELS`` from ``ema_type`` and the remaining arguments
    (``runnerx.model.ExponentialMovingAverage(model, momentum, interval, device,
    update_buffers)``) around ``runner.unwrapped_model``, so a wrapped (DDP) or compiled model
    works. Before ``begin_iter``/``begin_epoch`` the average stays a copy of the weights.

    For validation and testing the averaged values are swapped into the model's own tensors in
    place (a compiled forward stays valid; a scratch buffer the size of the largest tensor is
    kept for the swap). A checkpoint holds the averaged weights as ``state_dict`` (ready to
    deploy) and the training weights under ``ema_state_dict`` (``module.``-prefixed, with the
    average's ``steps``); resuming swaps them back, loading without resuming starts the
    average from the checkpoint's weights. (Resumed without EMAHook, training continues from
    the training weights too; ``load_from`` gives the averaged ones.)
    """

    priority = "NORMAL"

    def __init__(
        self,
        ema_type: str = "ExponentialMovingAverage",
        strict_load: bool = False,
        begin_iter: int = 0,
        begin_epoch: int = 0,
        **kwargs: Any,
    ) -> None:
        for name, value in (("begin_iter", begin_iter), ("begin_epoch", begin_epoch)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                # MMEngine asserts on a negative value; comparing a str fails with TypeError
                error = ValueAssertionError if type(value) is int else ValueTypeError
                raise error(f"EMAHook: {name} must be an int >= 0, got {value!r}")
        if begin_iter and begin_epoch:
            raise ValueAssertionError("EMAHook: set begin_iter or begin_epoch, not both")
        self.ema_cfg = dict(type=ema_type, **kwargs)
        _check_average_arguments(ema_type, kwargs)
        self.strict_load = strict_load
        self.begin_iter = begin_iter
        self.begin_epoch = begin_epoch
        self.enabled_by_epoch = begin_epoch > 0
        self._started = False
        self._copy_pairs: list[tuple[torch.Tensor, torch.Tensor]] = []
        self._swap_triples: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] | None = None

    def before_run(self, runner: Any) -> None:
        """Build the average around the unwrapped model."""
        from runnerx.parallel import is_fully_sharded

        if is_fully_sharded(runner.unwrapped_model):
            raise ValueError(
                "EMAHook cannot average a model sharded by FSDP (each rank holds only part of "
                "every weight); use strategy='ddp' with EMA, or remove EMAHook from custom_hooks"
            )
        self.src_model = runner.unwrapped_model
        self.ema_model = MODELS.build(self.ema_cfg, default_args=dict(model=self.src_model))
        # state_dict() tensors share storage with the modules: copying into them sets weights
        ema_state = self.ema_model.module.state_dict()
        src_state = self.src_model.state_dict()
        self._copy_pairs = [(ema_state[key], src_state[key]) for key in ema_state]
        self._swap_triples = None  # they hold the tensors of the average built before, if any

    def before_train(self, runner: Any) -> None:
        """Check that the average starts within the run."""
        if self.enabled_by_epoch and self.begin_epoch > runner.max_epochs:
            raise ValueAssertionError(
                f"EMAHook: begin_epoch={self.begin_epoch} is after the last epoch "
                f"(max_epochs={runner.max_epochs})"
            )
        if not self.enabled_by_epoch and self.begin_iter > runner.max_iters:
            raise ValueAssertionError(
                f"EMAHook: begin_iter={self.begin_iter} is after the last iteration "
                f"(max_iters={runner.max_iters})"
            )

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Update the average (or, before it begins, copy the weights)."""
        if not self._started:
            if self.enabled_by_epoch:
                self._started = runner.epoch + 1 >= self.begin_epoch
            else:
                self._started = runner.iter + 1 >= self.begin_iter
        if self._started:
            self.ema_model.update_parameters(self.src_model)
            return
        with torch.no_grad():
            for ema, src in self._copy_pairs:
                ema.copy_(src)

    def before_val_epoch(self, runner: Any) -> None:
        """Validate with the averaged weights."""
        self._swap_ema_parameters()

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Put the training weights back."""
        self._swap_ema_parameters()

    def before_test_epoch(self, runner: Any) -> None:
        """Test with the averaged weights."""
        self._swap_ema_parameters()

    def after_test_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Put the training weights back."""
        self._swap_ema_parameters()

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Save the averaged weights as ``state_dict`` and the training ones as
        ``ema_state_dict``."""
        checkpoint["ema_state_dict"] = self.ema_model.state_dict()
        self._swap_ema_state_dict(checkpoint)

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Restore the average: from ``ema_state_dict`` when resuming, else (``load_from``,
        ``tools/test.py``) from the weights the model is about to load, as MMEngine does:
        its ``state_dict`` (or the whole dict, a bare state dict) with ``module.`` dropped;
        without ``strict_load``, keys and shapes the model lacks are skipped."""
        resuming = bool(getattr(runner, "_resume", False))
        if resuming and "ema_state_dict" in checkpoint:
            self._swap_ema_state_dict(checkpoint)  # the model then loads its training weights
            self.ema_model.load_state_dict(checkpoint["ema_state_dict"], strict=self.strict_load)
            return
        if resuming:
            runner.logger.warning(
                "EMAHook: the checkpoint has no 'ema_state_dict'; the average starts from its "
                "'state_dict'"
            )
        elif not hasattr(self, "ema_model"):
            return  # loaded before before_run, which builds the average from the loaded model
        load_model_weights(self.ema_model.module, checkpoint, strict=self.strict_load)

    def _swap_ema_parameters(self) -> None:
        """Exchange the values of the model's and the average's tensors, in place (buffers too
        with ``update_buffers``). MMEngine's name: subclasses such as mmpretrain's EMAHook
        call it around their own evaluation passes."""
        if self._swap_triples is None:
            self._swap_triples = self._make_swap_triples()
        with torch.no_grad():
            for ema, src, scratch in self._swap_triples:
                scratch.copy_(ema)
                ema.copy_(src)
                src.copy_(scratch)

    def _swap_ema_state_dict(self, checkpoint: dict) -> None:
        """Exchange the checkpoint's ``state_dict`` entries with their ``module.``-prefixed
        ones in ``ema_state_dict`` (see :func:`~runnerx.checkpoint.ema_weights.swap_ema_weights`).
        MMEngine's name: subclasses such as mmpretrain's EMAHook call it in their
        ``after_load_checkpoint``."""
        swap_ema_weights(checkpoint)

    def _make_swap_triples(self) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """(averaged, source, scratch view) for each swapped tensor; one scratch buffer per
        device and dtype, as large as the largest tensor, serves all of them."""
        ema_module, src_module = self.ema_model.module, self.src_model
        ema_tensors: Any = ema_module.parameters()
        src_tensors: Any = src_module.parameters()
        if getattr(self.ema_model, "update_buffers", False):
            ema_tensors = itertools.chain(ema_tensors, ema_module.buffers())
            src_tensors = itertools.chain(src_tensors, src_module.buffers())
        pairs = list(zip(ema_tensors, src_tensors))
        sizes: dict[tuple[torch.device, torch.dtype], int] = {}
        for ema, _ in pairs:
            group = (ema.device, ema.dtype)
            sizes[group] = max(sizes.get(group, 0), ema.numel())
        buffers = {
            group: torch.empty(size, device=group[0], dtype=group[1])
            for group, size in sizes.items()
        }
        return [
            (ema, src, buffers[ema.device, ema.dtype][: ema.numel()].view(ema.shape))
            for ema, src in pairs
        ]


def _check_average_arguments(ema_type: Any, kwargs: dict) -> None:
    """Refuse an average type no registry knows, or an argument the average does not take,
    when the hook is built, so that the error comes with the hook's config key
    (``custom_hooks.N``) rather than when training starts."""
    average = _average_type(ema_type)
    if not callable(average):
        return
    try:
        inspect.signature(average).bind_partial(None, **kwargs)
    except TypeError as error:
        name = getattr(average, "__name__", ema_type)
        hint = did_you_mean_argument(error, average)
        raise TypeError(f"EMAHook: the average {name} {error}{hint}") from None


def _average_type(ema_type: Any) -> Any:
    """What ``ema_type`` names, looked up as ``before_run``'s build will (the default scope's
    registry first); None for a name registered only in another scope of the tree, which the
    default scope of ``before_run`` may reach. A name that is nowhere is an error."""
    if not isinstance(ema_type, str):
        return ema_type
    found, registries = lookup_type(MODELS, ema_type)
    if found is not None:
        return found
    if _registered_below(MODELS.root, ema_type):
        return None
    error = NotRegisteredError(ema_type, registries)
    error.args = (f"EMAHook.ema_type: {error}",)
    raise error


def _registered_below(registry: Any, name: str) -> bool:
    """Whether ``registry`` or a registry below it registers ``name``."""
    return name in registry.module_dict or any(
        _registered_below(child, name) for child in registry.children.values()
    )
