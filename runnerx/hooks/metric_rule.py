"""Whether a larger or a smaller metric is better: the rule of CheckpointHook and EarlyStopping.

``rule='greater'`` keeps the largest value, ``rule='less'`` the smallest. Left out, the rule is
inferred from the metric's name as MMEngine does: ``accuracy/top1`` and ``mIoU`` are 'greater',
``loss`` is 'less'.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

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
    """``rule`` when it is None, 'greater' or 'less'; otherwise a ValueError naming ``where``."""
    if rule is not None and rule not in RULES:
        raise ValueError(f"{where}: rule must be 'greater', 'less' or None, got {rule!r}")
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
