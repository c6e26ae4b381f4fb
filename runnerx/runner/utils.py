"""MMEngine's ``mmengine.runner.utils`` path: ``set_random_seed`` and
``calc_dynamic_intervals``, for code that imports them from there::

    from runnerx.runner.utils import calc_dynamic_intervals

    calc_dynamic_intervals(5, [(280, 1)])   # ([0, 280], [5, 1])
"""

from __future__ import annotations

from .environment import set_random_seed
from .val_schedule import interval_steps

__all__ = ["calc_dynamic_intervals", "set_random_seed"]


def calc_dynamic_intervals(
    start_interval: int, dynamic_interval_list: list[tuple[int, int]] | None = None
) -> tuple[list[int], list[int]]:
    """The milestones and the interval from each one on, as two lists, for a start interval
    and ``train_cfg.dynamic_intervals``-style ``(milestone, interval)`` pairs (checked as the
    loops check them)."""
    steps = interval_steps(start_interval, dynamic_interval_list)
    return [milestone for milestone, _ in steps], [interval for _, interval in steps]
