"""The 1cycle policy: up from a start value to a peak, then down to a final value."""

from __future__ import annotations

import math
from typing import Any

from runnerx.optim.scheduler.param_scheduler import (
    INF,
    _ParamScheduler,
    per_group,
    unwrap_optimizer,
)
from runnerx.registry import PARAM_SCHEDULERS


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


_ANNEALERS = {"cos": _anneal_cos, "linear": _anneal_linear}


@PARAM_SCHEDULERS.register_module()
class OneCycleParamScheduler(_ParamScheduler):
    """The 1cycle policy over ``total_steps`` steps (default ``end - begin``).

    The value goes from ``eta_max / div_factor`` up to ``eta_max`` over the first
    ``pct_start`` of the steps, then down to ``eta_max / div_factor / final_div_factor``
    (``anneal_strategy`` 'cos' or 'linear'). ``three_phase=True`` comes back down to the start
    value symmetrically before the final descent, as in the paper. The value the group held is
    not used; ``eta_max`` may be a list, one per param group. Not meant to be chained::

        dict(type='OneCycleLR', eta_max=0.1, total_steps=1000, by_epoch=False)

    The start, peak and final values are kept in each param group under
    ``initial_<name>``, ``max_<name>`` and ``min_<name>`` (the names torch uses for lr).
    """

    epoch_counted = ("total_steps",)
    #: the param-group keys (``<role>_<param_name>``) of the start, peak and final values
    waypoint_roles: tuple[str, str, str] = ("initial", "max", "min")

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        eta_max: float | list[float] = 0,
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        total_steps = end - begin if total_steps is None else total_steps
        if isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps < 1:
            raise ValueError(f"total_steps must be a positive int, but got {total_steps!r}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"pct_start must be between 0 and 1, but got {pct_start}")
        if anneal_strategy not in _ANNEALERS:
            raise ValueError(
                f"anneal_strategy must be 'cos' or 'linear', but got {anneal_strategy!r}"
            )
        self.eta_max = eta_max
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        self.div_factor = div_factor
        self.final_div_factor = final_div_factor
        start, peak, final = (f"{role}_{param_name}" for role in self.waypoint_roles)
        rise_end = float(pct_start * total_steps) - 1
        if three_phase:
            keys = (start, peak, start, final)
            ends = (rise_end, float(2 * pct_start * total_steps) - 2, total_steps - 1)
        else:
            keys = (start, peak, final)
            ends = (rise_end, total_steps - 1)
        self._schedule_phases = [
            {"end_step": end_step, f"start_{param_name}": keys[i], f"end_{param_name}": keys[i + 1]}
            for i, end_step in enumerate(ends)
        ]
        if last_step == -1:
            groups = unwrap_optimizer(optimizer).param_groups
            for group, values in zip(groups, self._waypoints(groups)):
                group.update(zip((start, peak, final), values))
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _waypoints(self, groups: list[dict]) -> list[tuple[float, float, float]]:
        """(start, peak, final) of each param group."""
        result = []
        for peak in per_group("eta_max", self.eta_max, groups):
            start = peak / self.div_factor
            result.append((start, peak, start / self.final_div_factor))
        return result

    def _value(self, group: dict, base: float) -> float:
        step = self.last_step
        if step > self.total_steps:
            raise ValueError(
                f"{type(self).__name__} was stepped {step + 1} times, but total_steps is "
                f"{self.total_steps}; make total_steps (or end - begin) cover the whole training"
            )
        phases = self._schedule_phases
        index, phase_start = 0, 0.0
        while index < len(phases) - 1 and step > phases[index]["end_step"]:
            phase_start = phases[index]["end_step"]
            index += 1
        phase = phases[index]
        pct = (step - phase_start) / (phase["end_step"] - phase_start)
        name = self.param_name
        start, end = group[phase[f"start_{name}"]], group[phase[f"end_{name}"]]
        return _ANNEALERS[self.anneal_strategy](start, end, pct)
