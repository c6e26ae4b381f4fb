"""Whether a larger or a smaller metric is better: the rule of CheckpointHook and EarlyStopping,
the error both raise for a monitored name the validation metrics lack, and their base class,
which tells a training's validations from a standalone ``runner.val()``.

``rule='greater'`` keeps the largest value, ``rule='less'`` the smallest. Left out, the rule is
inferred from the metric's name as MMEngine does: ``accuracy/top1`` and ``mIoU`` are 'greater',
``loss`` is 'less'.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import ValueAssertionError, ValueKeyError

#: Metric names (or parts of names) for which larger is better, as MMEngine's.
DEFAULT_GREATER_KEYS = (
    "acc",
    "top",
    "AR@",
    "auc",
    "precision",
    "mAP",
    "mDice",
    "mIoU",
    "mAcc",
    "aAcc",
)
#: Metric names (or parts of names) for which smaller is better, as MMEngine's.
DEFAULT_LESS_KEYS = ("loss",)

#: ``is_better(new, old)`` for each rule.
RULES: dict[str, Callable[[Any, Any], bool]] = {"greater": operator.gt, "less": operator.lt}


def check_rule(rule: str | None, where: str) -> str | None:
    """``rule`` when it is None, 'greater' or 'less'; otherwise a ValueError naming ``where``
    (also MMEngine's types: a KeyError for another name, an AssertionError for a non-str)."""
    if rule is not None and rule not in RULES:
        error = ValueKeyError if isinstance(rule, str) else ValueAssertionError
        raise error(f"{where}: rule must be 'greater', 'less' or None, got {rule!r}")
    return rule


def infer_rule(
    key: str,
    greater_keys: Sequence[str] = DEFAULT_GREATER_KEYS,
    less_keys: Sequence[str] = DEFAULT_LESS_KEYS,
    where: str = "rule",
) -> str:
    """The rule for metric ``key``: an exact (case-insensitive) match of a greater or less key
    first, then a greater or less key contained in ``key``."""
    name = key.lower()
    greater = {item.lower() for item in greater_keys}
    less = {item.lower() for item in less_keys}
    if name in greater:
        return "greater"
    if name in less:
        return "less"
    if any(item in name for item in greater):
        return "greater"
    if any(item in name for item in less):
        return "less"
    raise ValueError(
        f"{where}: cannot tell whether a larger or a smaller {key!r} is better; "
        "set rule='greater' or rule='less'"
    )


class MissingMetricError(KeyError, RuntimeError):
    """A monitored name (``EarlyStoppingHook.monitor``, ``CheckpointHook.save_best``) that is
    not among the validation metrics: a KeyError as MMEngine's CheckpointHook raises, and a
    RuntimeError as its EarlyStoppingHook (strict) raises."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""  # KeyError's str() would quote it


def missing_metric(where: str, name: str, metrics: dict) -> str:
    """The message for the monitored ``name`` that ``metrics`` (a validation's) lacks: the
    metrics there are, a close match, and that only the evaluator's metrics can be monitored
    (``where``: 'EarlyStoppingHook: monitor', 'CheckpointHook: save_best metric')."""
    available = ", ".join(map(repr, metrics)) or "none"
    return (
        f"{where} {name!r} is not among the validation metrics (available: {available})."
        f"{did_you_mean(name, metrics, form=SENTENCE)} Only the val_evaluator's metrics can be "
        "monitored, not values the model logs (Lightning's self.log('val_loss', ...), a "
        "'val/' scalar in the MessageHub); to monitor a loss, compute it in a metric: a "
        "BaseMetric whose compute_metrics returns it, e.g. dict(loss=...) (docs/evaluation.md "
        '"Writing a metric").'
    )


class TrainingValidationsHook(Hook):
    """Base of the hooks that judge the validations of a training only (CheckpointHook's
    ``save_best``, EarlyStoppingHook): ``self._training`` is True from ``before_train`` to
    ``after_train``, so that a standalone ``runner.val()``, also one after ``train()``, changes
    nothing, as Lightning's ``validate()``. It rests on the hook points alone, so a Runner
    subclass or a custom loop written for MMEngine keeps it right. Subclasses that override
    these points call ``super()``."""

    _training = False

    def before_run(self, runner: Any) -> None:
        """A run starts outside training (one that failed never reached ``after_train``)."""
        self._training = False

    def before_train(self, runner: Any) -> None:
        """Validations from now on belong to the training."""
        self._training = True

    def after_train(self, runner: Any) -> None:
        """Validations from now on are standalone ones."""
        self._training = False
