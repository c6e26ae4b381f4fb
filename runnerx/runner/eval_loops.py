"""The evaluation loops: ``val_cfg=dict()`` builds :class:`ValLoop`, ``test_cfg=dict()``
:class:`TestLoop`, and ``type=...`` any registered loop. One pass over the dataloader in eval
mode, each batch's ``val_step`` / ``test_step`` output fed to the evaluator, the iteration
hooks around each batch (:meth:`_EvalLoop.run_iter`); :meth:`_EvalLoop.evaluate_batches` is
that pass, which the validation sanity check (``num_sanity_val_steps``) runs without the hooks
before training.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

from runnerx.config.config_dict import keyed_copy
from runnerx.data.build import length_of
from runnerx.evaluator.predictions import predictions_error
from runnerx.logging import ProgressBar
from runnerx.optim.amp_optim_wrapper import resolve_amp_dtype
from runnerx.registry import LOOPS
from runnerx.registry.errors import mark_wrapped

from .arguments import check_model_step, stage_off_hint
from .base_loop import BaseLoop, accepted_keywords, refuse_uneven_batches
from .batch_limits import FirstBatches, evaluated_samples, limited


def build_eval_loop(
    runner: Any, dataloader: Any, loop_cfg: dict, evaluator: Any, default: type
) -> Any:
    """The val/test loop ``val_cfg`` / ``test_cfg`` asks for (``default`` when no type)."""
    loop_cfg = keyed_copy(loop_cfg, f"{default.mode}_cfg")
    loop_cfg.setdefault("type", default)
    defaults = {"runner": runner, "dataloader": dataloader, "evaluator": evaluator}
    return LOOPS.build(loop_cfg, default_args=defaults)


class _EvalLoop(BaseLoop):
    """What validation and test share: one pass in eval mode, then the evaluator."""

    mode = "val"
    default_sampler = {"type": "DefaultSampler", "shuffle": False}
    # (before hooks, val_step / test_step, after hooks) while a pass runs; None between passes
    _batch_calls: tuple[Sequence[Callable], Callable, Sequence[Callable]] | None = None

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        evaluator: Any,
        fp16: bool = False,
        limit_batches: int | float | None = None,
        dtype: str | torch.dtype | None = None,
    ) -> None:
        check_model_step(runner.model, runner.unwrapped_model, self.mode)  # before training
        super().__init__(runner, dataloader)
        build = runner.build_evaluator
        try:
            self.evaluator = build(
                evaluator, **accepted_keywords(build, key=f"{self.mode}_evaluator")
            )
        except (TypeError, ValueError) as error:
            # it names {mode}_evaluator or the metric it built: not this loop's {mode}_cfg
            mark_wrapped(error)
            raise
        if self.dataset_meta is not None:
            self.evaluator.dataset_meta = self.dataset_meta
        self.fp16 = fp16
        if dtype is not None:
            resolve_amp_dtype(dtype, key=f"{self.mode}_cfg.dtype")  # a wrong name fails here
        self.dtype = dtype
        length_of(self.dataloader, f"{self.mode}_dataloader")  # the progress bar's, the metric's
        key = f"{self.mode}_cfg.limit_batches"
        try:
            self.dataloader = limited(self.dataloader, limit_batches, key)
        except ValueError as error:
            if limit_batches != 0:
                raise
            # Lightning's limit_val_batches=0 turns validation off: say what does that here
            raise ValueError(f"{error}; {stage_off_hint(self.mode)}") from None
        self._checked_batches: Any = None  # the dataloader whose batch counts the ranks agree on

    def apply_fast_dev_run(self, batches: int) -> None:
        """Evaluate the first ``batches`` batches only (``fast_dev_run``; within
        ``limit_batches``)."""
        self.dataloader = FirstBatches(self.dataloader, batches)

    def run(self) -> dict:
        """Evaluate the model on the whole dataloader and return the metrics."""
        runner, mode = self.runner, self.mode
        self._check_batches_for_sharded_model()
        runner.call_hook(f"before_{mode}")
        runner.call_hook(f"before_{mode}_epoch")
        before = runner.hook_methods(f"before_{mode}_iter")
        after = runner.hook_methods(f"after_{mode}_iter")
        metrics = self.evaluate_batches(self.dataloader, before, after)
        runner.call_hook(f"after_{mode}_epoch", metrics=metrics)
        runner.call_hook(f"after_{mode}")
        return metrics

    def evaluate_batches(
        self, batches: Any, before: Sequence[Callable] = (), after: Sequence[Callable] = ()
    ) -> dict:
        """The metrics of ``batches`` (the loop's dataloader, or part of it): the model in eval
        mode, under ``torch.no_grad()`` and the loop's ``fp16`` autocast, goes through
        :meth:`run_iter` for each batch. ``before`` / ``after`` are what ``run_iter`` calls
        around each batch (``run`` passes the iteration hooks; the sanity check none)."""
        self.runner.model.eval()
        bar = ProgressBar(len(batches))
        with self._pass(before, after):
            for idx, data_batch in enumerate(batches):
                self.run_iter(idx, data_batch)
                bar.update()
        bar.close()
        return self.evaluator.evaluate(evaluated_samples(batches))

    def run_iter(self, idx: int, data_batch: Any) -> None:
        """One batch, as MMEngine's ``ValLoop.run_iter`` / ``TestLoop.run_iter``: the
        ``before_{val,test}_iter`` hooks, ``val_step`` / ``test_step``, the evaluator's
        ``process``, the ``after_..._iter`` hooks. A subclass may override it to change what
        each batch does. Called on its own (a hook that evaluates again, as mmpretrain's
        EMAHook does after validation) it runs under ``torch.no_grad()`` and the loop's
        autocast with the runner's iteration hooks, as MMEngine's does."""
        runner = self._runner
        if self._batch_calls is None:  # called on its own, outside a pass
            hooks = [
                runner.hook_methods(f"{when}_{self.mode}_iter") for when in ("before", "after")
            ]
            with self._pass(*hooks):
                # this body, not self.run_iter: a subclass's override would run a second time
                _EvalLoop.run_iter(self, idx, data_batch)
            return
        before, step, after = self._batch_calls
        for hook in before:
            hook(runner, batch_idx=idx, data_batch=data_batch)
        outputs = step(data_batch)
        if outputs is None:  # a custom metric would fail on it with no hint
            raise predictions_error(
                f"{self.mode}_evaluator",
                f"{type(runner.unwrapped_model).__name__}.{self.mode}_step",
                "None",
            )
        self.evaluator.process(data_samples=outputs, data_batch=data_batch)
        for hook in after:
            hook(runner, batch_idx=idx, data_batch=data_batch, outputs=outputs)

    @contextmanager
    def _pass(self, before: Sequence[Callable], after: Sequence[Callable]) -> Iterator[None]:
        """Batches run inside it: gradients off, the loop's autocast, and what
        :meth:`run_iter` calls looked up once."""
        step = getattr(self.runner.model, f"{self.mode}_step")
        self._batch_calls = (before, step, after)
        try:
            with torch.no_grad(), self._autocast():
                yield
        finally:
            self._batch_calls = None

    def _check_batches_for_sharded_model(self) -> None:
        """A model sharded by FSDP gathers its weights in every forward, which every rank must
        join: refuse, before the first batch, a dataloader that gives the ranks different
        numbers of batches (``sampler.round_up=False``), on which the ranks would hang or
        crash. Once per dataloader; other models evaluate such a split as it is."""
        from runnerx.parallel import is_fully_sharded

        if self._checked_batches is self.dataloader:
            return
        if is_fully_sharded(self.runner.unwrapped_model):
            refuse_uneven_batches(
                self.dataloader,
                f"{self.mode}_dataloader",
                "the model is sharded by FSDP, and every one of its forward passes needs all ranks",
                f"set {self.mode}_dataloader.sampler.round_up=True (the samples it repeats to "
                "even out the ranks are left out of the metrics)",
            )
        self._checked_batches = self.dataloader

    def _autocast(self) -> Any:
        device = next(self.runner.unwrapped_model.parameters(), torch.empty(0)).device
        dtype = resolve_amp_dtype(self.dtype, device.type)
        enabled = bool(self.fp16) or self.dtype is not None
        return torch.autocast(device.type, dtype=dtype, enabled=enabled)


@LOOPS.register_module()
class ValLoop(_EvalLoop):
    """Validation: ``val_cfg=dict()``. ``fp16=True`` evaluates under autocast in the device's
    default dtype, as MMEngine does (float16 on CUDA, bfloat16 on CPU); ``dtype='bfloat16'``
    (or ``'float16'``) under autocast in that dtype; ``limit_batches=N`` or a share such as
    ``0.1`` evaluates the first batches only."""

    mode = "val"


@LOOPS.register_module()
class TestLoop(_EvalLoop):
    """Test: ``test_cfg=dict()`` (``fp16``, ``dtype`` and ``limit_batches`` as in
    :class:`ValLoop`)."""

    mode = "test"
