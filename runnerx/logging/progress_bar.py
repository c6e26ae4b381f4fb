"""ProgressBar: one self-rewriting line for validation and test loops on a terminal.

::

    [>>>>>>>>>>>>                            ] 12/40, 30.5 it/s, elapsed: 1s, ETA: 1s

It draws only on rank 0 and only when the stream is a terminal, so nothing of it ends up
in log files or captured output, and it redraws at most ten times a second.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, TextIO

from runnerx.dist import get_rank

_REDRAW_SECONDS = 0.1


class ProgressBar:
    """Counts finished items out of ``total`` and shows the count on a terminal.

    .. code-block:: python

        bar = ProgressBar(len(dataloader))
        for batch in dataloader:
            ...
            bar.update()
        bar.close()

    ``total=0`` (length unknown) shows the count and speed without a bar or ETA.
    """

    #: the widest the bar gets (narrower when the terminal is)
    bar_width = 40

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        if not isinstance(total, int) or total < 0:
            raise ValueError(f"total must be a non-negative int, got {total!r}")
        self.total = total
        self.completed = 0
        self._stream = sys.stdout if stream is None else stream
        self._enabled = get_rank() == 0 and _is_terminal(self._stream)
        self._start = time.monotonic()
        self._last_draw = -float("inf")
        self._drawn_width = 0
        self._drawn_count = -1  # what the line shows now (close draws only if it changed)

    def update(self, n: int = 1) -> None:
        """Count ``n`` more finished items."""
        self.completed += n
        if self._enabled:
            now = time.monotonic()
            if now - self._last_draw >= _REDRAW_SECONDS or self.completed >= self.total > 0:
                self._draw(now)

    def close(self) -> None:
        """Draw the final state and end the line (nothing is drawn after this)."""
        if self._enabled:
            if self._drawn_count != self.completed:
                self._draw(time.monotonic())
            self._stream.write("\n")
            self._stream.flush()
            self._enabled = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def _draw(self, now: float) -> None:
        self._last_draw = now
        elapsed = now - self._start
        speed = self.completed / elapsed if elapsed > 0 else 0.0
        rate = f"{speed:.1f} it/s, elapsed: {elapsed:.0f}s"
        if self.total:
            eta = max(self.total - self.completed, 0) / speed if speed > 0 else 0.0
            counts = f"{self.completed}/{self.total}, {rate}, ETA: {eta:.0f}s"
            columns = shutil.get_terminal_size().columns
            width = max(min(self.bar_width, columns - len(counts) - 4), 10)
            filled = min(width, width * self.completed // self.total)
            status = f"[{'>' * filled}{' ' * (width - filled)}] {counts}"
        else:
            status = f"{self.completed}, {rate}"
        # pad over the rest of a longer previous line
        self._stream.write(f"\r{status.ljust(self._drawn_width)}")
        self._stream.flush()
        self._drawn_width = len(status)
        self._drawn_count = self.completed


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except (OSError, ValueError):  # a closed or detached stream
        return False
