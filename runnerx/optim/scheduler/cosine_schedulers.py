"""Cosine schedulers: one annealing curve, or several with restarts."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

from runnerx.optim.scheduler.param_scheduler import INF, _ParamScheduler
from runnerx.registry import PARAM_SCHEDULERS
from runnerx.utils.errors import ValueAssertionError


def _eta_min_pair(eta_min: float | None, eta_min_ratio: float | None) -> tuple:
    """Check that at most one of ``eta_min`` / ``eta_min_ratio`` is given; neither means 0."""
    if eta_min is not None and eta_min_ratio is not None:
        raise ValueAssertionError(
            f"give eta_min or eta_min_ratio, not both (got eta_min={eta_min}, "
            f"eta_min_ratio={eta_min_ratio})"
        )
    if eta_min is None and eta_min_ratio is None:
        return 0.0, None
    return eta_min, eta_min_ratio


def _cosine_next(current: float, floor: float, step: int, period: int) -> float:
    """The value at ``step`` of a half cosine down to ``floor``, chained from ``current`` (the
    value at ``step - 1``)."""
    ratio = (1 + math.cos(math.pi * step / period)) / (1 + math.cos(math.pi * (step - 1) / period))
    return ratio * (current - floor) + floor


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingParamScheduler(_ParamScheduler):
    """Anneal the value along a half cosine from its initial value to ``eta_min`` over
    ``T_max`` steps (default ``end - begin``); ``eta_min_ratio`` gives the floor relative to
    the initial value instead.

    ``dict(type='CosineAnnealingLR', T_max=100, eta_min=1e-5, by_epoch=True, begin=0, end=100)``
    """

    epoch_counted = ("T_max",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        T_max: int | None = None,
        eta_min: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
        eta_min_ratio: float | None = None,
    ) -> None:
        self.eta_min, self.eta_min_ratio = _eta_min_pair(eta_min, eta_min_ratio)
        self.T_max = T_max or (end - begin)
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        step, period = self.last_step, self.T_max
        if step == 0:
            return current
        floor = self.eta_min if self.eta_min_ratio is None else base * self.eta_min_ratio
        if (step - 1 - period) % (2 * period) == 0:
            # just past a trough, where the ratio below would divide by 1 + cos(pi) = 0
            return current + (base - floor) * (1 - math.cos(math.pi / period)) / 2
        return _cosine_next(current, floor, step, period)


@PARAM_SCHEDULERS.register_module()
class CosineRestartParamScheduler(_ParamScheduler):
    """Cosine annealing in consecutive ``periods``; each period restarts at the initial value
    times its ``restart_weights`` entry and anneals to ``eta_min`` (or initial value times
    ``eta_min_ratio``). After the last period the value stays where it is.

    ``dict(type='CosineRestartLR', periods=[30, 60], restart_weights=[1, 0.5], eta_min=1e-5)``
    """

    epoch_counted = ("periods",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        periods: Sequence[int],
        restart_weights: Sequence[float] = (1,),
        eta_min: float | None = None,
        eta_min_ratio: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if len(periods) != len(restart_weights):
            raise ValueAssertionError(
                f"periods and restart_weights must have the same length, but got "
                f"{len(periods)} periods and {len(restart_weights)} restart_weights"
            )
        self.eta_min, self.eta_min_ratio = _eta_min_pair(eta_min, eta_min_ratio)
        self.periods = list(periods)
        self.restart_weights = list(restart_weights)
        self.cumulative_periods = [sum(self.periods[: i + 1]) for i in range(len(self.periods))]
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        index = bisect.bisect_right(self.cumulative_periods, self.last_step)
        if index == len(self.periods):
            return current
        restart = self.cumulative_periods[index - 1] if index else 0
        step, period = self.last_step - restart, self.periods[index]
        if step == 0:
            return base * self.restart_weights[index]
        floor = self.eta_min if self.eta_min_ratio is None else base * self.eta_min_ratio
        return _cosine_next(current, floor, step, period)
