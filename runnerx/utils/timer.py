"""MMEngine's Timer: a stopwatch for scripts, a ``with`` block that prints its duration, and
``check_time`` for timing the steps of a loop by id.

.. code-block:: python

    with Timer(print_tmpl='took {:.1f} s'):
        convert_dataset()
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["Timer", "TimerError", "check_time"]


class TimerError(Exception):
    """Raised when a stopped :class:`Timer` is read."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Timer:
    """A stopwatch (seconds, from a monotonic clock); started at once unless ``start=False``.

    :meth:`since_start` is the time since :meth:`start`, :meth:`since_last_check` the time
    since the previous reading. As a context manager it prints the block's duration with
    ``print_tmpl`` (default ``'{:.3f}'``) and stops.
    """

    def __init__(self, start: bool = True, print_tmpl: str | None = None) -> None:
        self._is_running = False
        self.print_tmpl = print_tmpl or "{:.3f}"
        if start:
            self.start()

    @property
    def is_running(self) -> bool:
        """Whether the timer is running."""
        return self._is_running

    def __enter__(self) -> Timer:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        print(self.print_tmpl.format(self.since_last_check()))
        self._is_running = False

    def start(self) -> None:
        """Start the timer (a running timer keeps its start) and mark a check now."""
        now = time.perf_counter()
        if not self._is_running:
            self._t_start = now
            self._is_running = True
        self._t_last = now

    def since_start(self) -> float:
        """Seconds since the timer started (this is a check too)."""
        self._t_last = self._now()
        return self._t_last - self._t_start

    def since_last_check(self) -> float:
        """Seconds since the previous check (or the start)."""
        now = self._now()
        elapsed, self._t_last = now - self._t_last, now
        return elapsed

    def _now(self) -> float:
        if not self._is_running:
            raise TimerError("timer is not running")
        return time.perf_counter()


_timers: dict[Any, Timer] = {}


def check_time(timer_id: Any) -> float:
    """Seconds since the previous ``check_time(timer_id)``; the first call starts that timer
    and returns 0.

    .. code-block:: python

        for item in items:
            process(item)
            print(check_time('process'))     # time taken by this item
    """
    timer = _timers.get(timer_id)
    if timer is None:
        _timers[timer_id] = Timer()
        return 0
    return timer.since_last_check()
