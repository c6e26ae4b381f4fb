"""EarlyStoppingHook: stops training when a validation metric stops improving."""

from __future__ import annotations

import math
from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.hooks.metric_rule import RULES, check_rule, infer_rule
from runnerx.registry import HOOKS
from runnerx.suggest import close_matches


@HOOKS.register_module()
class EarlyStoppingHook(Hook):
    """Sets ``runner.train_loop.stop_training`` once ``monitor`` has not improved by more than
    ``min_delta`` for ``patience`` validations, reached ``stopping_threshold``, or (with
    ``check_finite``) become NaN or infinite; the reason is logged::

        custom_hooks = [dict(type='EarlyStoppingHook', monitor='accuracy/top1', patience=3)]

    ``rule`` ('greater' or 'less') is inferred from the metric name when left out. A metric
    missing from the results is a warning, or an error with ``strict=True``.
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
    ) -> None:
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
        self.wait_count = 0
        self.best_score = -math.inf if self.rule == "greater" else math.inf

    def before_train(self, runner: Any) -> None:
        """Check that the train loop can be stopped (MMEngine asserts it in ``before_run``;
        checked here so that a ``val()`` or ``test()`` run does not build the train loop)."""
        loop = runner.train_loop
        if not hasattr(loop, "stop_training"):
            raise TypeError(
                f"EarlyStoppingHook: the train loop {type(loop).__name__} has no "
                "'stop_training' attribute, so it could never be stopped; give the loop a "
                "'stop_training = False' attribute that ends training once it is True (the "
                "built-in train loops have one), or remove the hook from custom_hooks"
            )

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Compare the monitored metric with the best so far and stop training if it is time."""
        metrics = metrics or {}
        if self.monitor not in metrics:
            self._report_missing(runner, metrics)
            return
        reason = self._stop_reason(float(metrics[self.monitor]))
        if reason is not None:
            runner.train_loop.stop_training = True
            runner.logger.info(f"Early stopping: {reason}")

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
        available = ", ".join(map(repr, metrics)) or "none"
        close = close_matches(self.monitor, [str(key) for key in metrics], n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        message = (
            f"EarlyStoppingHook: monitor {self.monitor!r} is not among the validation metrics "
            f"(available: {available}).{hint}"
        )
        if self.strict:
            raise RuntimeError(message)
        runner.logger.warning(message + " Early stopping is skipped for this validation.")
