"""EarlyStoppingHook: stops training when a validation metric stops improving."""

from __future__ import annotations

import copy
import math
from typing import Any

from runnerx.hooks.metric_rule import (
    RULES,
    MissingMetricError,
    TrainingValidationsHook,
    check_rule,
    infer_rule,
    missing_metric,
)
from runnerx.registry import HOOKS
from runnerx.suggest import refuse_unknown_keywords

#: The checkpoint entry that holds the hooks' state, by monitor (MMEngine ignores it)
CHECKPOINT_KEY = "early_stopping"
#: Lightning's EarlyStopping arguments that runnerx names otherwise, and what they are here
LIGHTNING_ARGUMENTS = {
    "mode": "rule ('min' is rule='less', 'max' rule='greater'; left out, it is inferred from "
    "the monitor's name)",
    "save_top_k": "CheckpointHook's max_keep_best (default_hooks.checkpoint with "
    "save_best='<metric>'); EarlyStoppingHook keeps no checkpoints",
    "verbose": "nothing: why training stopped is always logged",
}


@HOOKS.register_module()
class EarlyStoppingHook(TrainingValidationsHook):
    """Sets ``runner.train_loop.stop_training`` once ``monitor`` has not improved by more than
    ``min_delta`` for ``patience`` validations, reached ``stopping_threshold``, got worse than
    ``divergence_threshold`` (Lightning's), or (with ``check_finite``) become NaN or infinite;
    the reason is logged. Only the validations of a training count: a standalone
    ``runner.val()``, also one after ``train()``, changes nothing::

        custom_hooks = [dict(type='EarlyStoppingHook', monitor='accuracy/top1', patience=3)]

    ``rule`` ('greater' or 'less') is inferred from the metric name when left out. A metric
    missing from the results is a warning, or an error with ``strict=True``.

    Unlike MMEngine's (which starts afresh on resume, so that a resumed run stops at
    another validation than the unbroken one), the hook keeps ``wait_count``,
    ``best_score`` and where it stopped training in checkpoints, under ``'early_stopping'``
    (by monitor), and a resumed run takes them back (as Lightning's EarlyStopping does), so
    that it stops where the unbroken run did. Resuming a run it had stopped logs where and
    why, and stops again before training unless ``patience`` was raised above the saved
    wait count.
    """

    priority = "LOWEST"

    def __init__(
        self,
        monitor: str,
        rule: str | None = None,
        min_delta: float = 0.1,
        strict: bool = False,
        check_finite: bool = True,
        patience: int = 5,
        stopping_threshold: float | None = None,
        divergence_threshold: float | None = None,
        **lightning: Any,
    ) -> None:
        if lightning:  # keywords it does not take: refused, Lightning's with runnerx's name
            refuse_unknown_keywords(
                "EarlyStoppingHook",
                lightning,
                self.__init__,
                LIGHTNING_ARGUMENTS,
                "Lightning's EarlyStopping (docs/lightning.md, 'The built-in callbacks')",
            )
        if not isinstance(monitor, str) or not monitor:
            raise TypeError(f"EarlyStoppingHook: monitor must be a metric name, got {monitor!r}")
        if not isinstance(patience, int) or patience < 1:
            raise ValueError(f"EarlyStoppingHook: patience must be an int >= 1, got {patience!r}")
        self.monitor = monitor
        where = "EarlyStoppingHook"
        self.rule = check_rule(rule, where) or infer_rule(monitor, where=where)
        self.min_delta = abs(min_delta)
        self.strict = strict
        self.check_finite = check_finite
        self.patience = patience
        self.stopping_threshold = stopping_threshold
        self.divergence_threshold = divergence_threshold
        self.wait_count = 0
        self.best_score = -math.inf if self.rule == "greater" else math.inf
        self._stopped: dict | None = None  # where and why this hook stopped training
        self._seen_before_val: int | None = None  # see before_save_checkpoint
        self._stop_on_resume = False

    def before_train(self, runner: Any) -> None:
        """Check that the train loop can be stopped (MMEngine asserts it in ``before_run``;
        checked here so that a ``val()`` or ``test()`` run does not build the train loop)."""
        super().before_train(runner)
        loop = runner.train_loop
        if not hasattr(loop, "stop_training"):
            raise TypeError(
                f"EarlyStoppingHook: the train loop {type(loop).__name__} has no "
                "'stop_training' attribute, so it could never be stopped; give the loop a "
                "'stop_training = False' attribute that ends training once it is True (the "
                "built-in train loops have one), or remove the hook from custom_hooks"
            )
        if self._stop_on_resume:
            loop.stop_training = True

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Compare the monitored metric with the best so far and stop training if it is time
        (nothing to judge outside a training)."""
        self._seen_before_val = None  # checkpoints saved from now on have this validation
        if not self._training:
            return
        metrics = metrics or {}
        if self.monitor not in metrics:
            self._report_missing(runner, metrics)
            return
        reason = self._stop_reason(float(metrics[self.monitor]))
        if reason is not None:
            runner.train_loop.stop_training = True
            runner.logger.info(f"Early stopping: {reason}")
            self._stopped = self._where(runner, reason)

    def before_val_epoch(self, runner: Any) -> None:
        """Note how many values of the monitor the message hub holds (see
        :meth:`before_save_checkpoint`)."""
        self._seen_before_val = _hub_count(runner, self.monitor)

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Save the state under ``checkpoint['early_stopping'][monitor]``.

        A checkpoint saved inside a validation (a new best, a periodic one saved again) is
        written before this LOWEST hook sees the metrics: it gets the state after them, from
        the value RuntimeInfoHook put in the message hub, so that resuming it (which does
        not validate again) is exact."""
        hook = self
        value = _hub_value(runner, self.monitor, self._seen_before_val)
        if value is not None:
            hook = copy.copy(self)
            reason = hook._stop_reason(value)
            if reason is not None:
                hook._stopped = hook._where(runner, reason)
        checkpoint.setdefault(CHECKPOINT_KEY, {})[self.monitor] = {
            "rule": hook.rule,
            "wait_count": hook.wait_count,
            "best_score": hook.best_score,
            "stopped": hook._stopped,
        }

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """On resume, take the saved state back (a checkpoint without it, MMEngine's or
        ``load_from``'s, leaves the hook fresh). When that run had been stopped, say where
        and why, and stop again before training while its wait count still reaches
        ``patience`` (a resume of the checkpoint saved before the stopping validation
        validates again and stops there too)."""
        state = (checkpoint.get(CHECKPOINT_KEY) or {}).get(self.monitor)
        if not getattr(runner, "_resume", False) or not isinstance(state, dict):
            return
        if state.get("rule") != self.rule:
            runner.logger.warning(
                f"EarlyStoppingHook: the checkpoint compared {self.monitor} with rule "
                f"{state.get('rule')!r}, this run with {self.rule!r}; patience starts afresh"
            )
            return
        self.wait_count = int(state["wait_count"])
        self.best_score = float(state["best_score"])
        stopped = state.get("stopped")
        if not stopped:
            return
        self._stop_on_resume = self.wait_count >= self.patience
        then = (
            "stops it again before training: raise patience to train on"
            if self._stop_on_resume
            else "lets training go on"
        )
        runner.logger.warning(
            f"EarlyStoppingHook: the run resumed from was stopped early {stopped['where']}: "
            f"{stopped['reason']} Its saved state (best {self.monitor} {self.best_score:.4f}, "
            f"{self.wait_count} validation(s) without improvement) with patience="
            f"{self.patience} {then}."
        )

    @staticmethod
    def _where(runner: Any, reason: str) -> dict:
        """Where training stopped: the iterations done and, epoch-based, the epoch."""
        mid_epoch = getattr(runner.train_loop, "validating_mid_epoch", False) is True
        epoch = runner.epoch + mid_epoch
        where = f"after iteration {runner.iter}" + (f" (epoch {epoch})" if epoch else "")
        return {"epoch": epoch, "iter": runner.iter, "where": where, "reason": reason}

    def _stop_reason(self, score: float) -> str | None:
        """Why training should stop after ``score``, or None to go on (updating the state)."""
        better = RULES[self.rule]
        if self.check_finite and not math.isfinite(score):
            return (
                f"{self.monitor} = {score} is not finite; the best value was {self.best_score:.4f}."
            )
        if self.stopping_threshold is not None and better(score, self.stopping_threshold):
            self.best_score = score
            return f"{self.monitor} = {score} reached stopping_threshold={self.stopping_threshold}."
        if self.divergence_threshold is not None and better(self.divergence_threshold, score):
            return (
                f"{self.monitor} = {score} is worse than divergence_threshold="
                f"{self.divergence_threshold}; the best value was {self.best_score:.4f}."
            )
        delta = self.min_delta if self.rule == "greater" else -self.min_delta
        if not better(self.best_score + delta, score):  # as MMEngine: reaching best + delta counts
            self.best_score = score
            self.wait_count = 0
            return None
        self.wait_count += 1
        if self.wait_count >= self.patience:
            return (
                f"{self.monitor} did not improve by {self.min_delta} or more in the last "
                f"{self.wait_count} validations; the best value was {self.best_score:.4f}."
            )
        return None

    def _report_missing(self, runner: Any, metrics: dict) -> None:
        message = missing_metric("EarlyStoppingHook: monitor", self.monitor, metrics)
        if self.strict:
            raise MissingMetricError(message)
        runner.logger.warning(message + " Early stopping is skipped for this validation.")


def _hub_count(runner: Any, monitor: str) -> int:
    buffer = runner.message_hub.log_scalars.get(f"val/{monitor}")
    return 0 if buffer is None else buffer.count


def _hub_value(runner: Any, monitor: str, count_before: int | None) -> float | None:
    """The monitor's value of the validation in progress, once RuntimeInfoHook recorded it
    (the hub has more values than before it began), else None."""
    if count_before is None or _hub_count(runner, monitor) <= count_before:
        return None
    return float(runner.message_hub.get_scalar(f"val/{monitor}").current())
