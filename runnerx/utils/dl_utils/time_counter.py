"""``TimeCounter``: the average time of a function or a block, logged every few runs."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from runnerx.utils.errors import ValueAssertionError


class TimeCounter:
    """Averages the time of a function (as a decorator) or of a ``with`` block, and logs
    the average in milliseconds every ``log_interval`` runs, leaving the first
    ``warmup_interval - 1`` runs out of it.

    .. code-block:: python

        @TimeCounter(log_interval=10, warmup_interval=3)
        def preprocess(batch): ...

        with TimeCounter(tag='decode'):
            decode(outputs)

    ``with_sync`` waits for the GPU before reading the clock, so that GPU work is counted.
    Counters are kept by ``tag``: ``TimeCounter(tag='decode')`` returns the same counter each
    time. Only the main process logs, through ``logger`` (default: the current logger).
    """

    instance_dict: ClassVar[dict[str | None, TimeCounter]] = {}

    def __new__(
        cls,
        log_interval: int = 1,
        warmup_interval: int = 1,
        with_sync: bool = True,
        tag: str | None = None,
        logger: logging.Logger | None = None,
    ) -> TimeCounter:
        if warmup_interval < 1:
            raise ValueAssertionError(
                f"TimeCounter: warmup_interval must be >= 1, got {warmup_interval}"
            )
        if tag is not None and tag in cls.instance_dict:
            return cls.instance_dict[tag]
        counter = super().__new__(cls)
        cls.instance_dict[tag] = counter
        counter.log_interval = log_interval
        counter.warmup_interval = warmup_interval
        counter.with_sync = with_sync
        counter.tag = tag
        counter.logger = logger
        counter._count = 0
        counter._total = 0.0
        counter._started = 0.0
        return counter

    def __call__(self, fn: Callable) -> Callable:
        if self.tag is None:
            self.tag = fn.__name__

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return timed

    def __enter__(self) -> None:
        if self.tag is None:
            raise ValueAssertionError(
                "TimeCounter as a `with` block needs a tag=, to name its logs"
            )
        self._count += 1
        self._sync()
        self._started = time.perf_counter()

    def __exit__(self, *exc_info: Any) -> None:
        self._sync()
        self.print_time(time.perf_counter() - self._started)

    def print_time(self, elapsed: float) -> None:
        """Add one run of ``elapsed`` seconds; log the average when it is time to."""
        if self._count < self.warmup_interval:
            return
        self._total += elapsed
        if self._count % self.log_interval == 0:
            from runnerx.dist import is_main_process
            from runnerx.logging.logger import print_log

            if is_main_process():
                average_ms = 1000 * self._total / (self._count - self.warmup_interval + 1)
                print_log(
                    f"[{self.tag}]-time per run averaged in the past {self._count} runs: "
                    f"{average_ms:.1f} ms",
                    self.logger,
                )

    def _sync(self) -> None:
        if self.with_sync and torch.cuda.is_available():
            torch.cuda.synchronize()
