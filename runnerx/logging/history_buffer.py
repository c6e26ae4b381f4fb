"""HistoryBuffer: the recent values of one logged scalar, and exact statistics over all of them.

Updating costs the same at iteration 10 and at iteration 40,000: a value is appended to a
bounded deque and nothing is copied. A 0-dim torch tensor is stored as it is, so updating
never waits for the device; the tensors are turned into floats together, in one transfer,
the first time something is read (which only logging iterations do).
"""

from __future__ import annotations

import math
from collections import deque
from itertools import islice
from typing import Any

import torch

#: Unread tensors are materialised once this many have piled up, so a run nobody reads
#: (no LoggerHook) keeps a bounded number of device tensors alive.
_MAX_UNREAD = 1024
_STATISTICS = ("mean", "min", "max", "current")


class HistoryBuffer:
    """The recent values of one scalar (``max_length`` of them) and running totals of all.

    A value counts for ``count`` observations, as in MMEngine: ``mean`` is the sum of the
    values divided by the sum of their counts. ``mean``/``min``/``max`` with ``window=None``
    (or a window at least as long as the whole history) are exact over every update ever
    made, even after old values have left the buffer.

    .. code-block:: python

        buffer = HistoryBuffer()
        buffer.update(loss)          # a float or a 0-dim tensor; no host-device sync
        buffer.mean(10)              # smoothed over the last 10 updates
        buffer.current(), buffer.min(), buffer.max(), buffer.count
    """

    def __init__(self, max_length: int = 10_000) -> None:
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        self.max_length = max_length
        self._values: deque[Any] = deque(maxlen=max_length)
        self._counts: deque[int] = deque(maxlen=max_length)
        # The newest `_unread` entries may hold tensors and are not yet in the running totals.
        # Folding them in before there are max_length of them means none is ever dropped unread.
        self._unread = 0
        self._fold_at = min(max_length, _MAX_UNREAD)
        self._num_updates = 0
        self._total = 0.0
        self._total_count = 0
        self._min = math.inf
        self._max = -math.inf

    def update(self, value: Any, count: int = 1) -> None:
        """Record ``value`` (a Python number, a numpy scalar or a one-element tensor)."""
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise ValueError(f"a logged tensor must hold one value, got shape {value.shape}")
        else:
            value = _as_float(value)
        if not isinstance(count, int):
            raise TypeError(f"count must be an int, got {type(count).__name__}")
        self._values.append(value)
        self._counts.append(count)
        self._unread += 1
        if self._unread >= self._fold_at:
            self._fold_unread()

    @property
    def count(self) -> int:
        """How many updates were made over the buffer's whole life (kept values or not)."""
        return self._num_updates + self._unread

    def __len__(self) -> int:
        """How many values the buffer keeps now (at most ``max_length``)."""
        return len(self._values)

    def current(self) -> float:
        """The newest value."""
        self._fold_unread()
        self._require_values()
        return self._values[-1]

    def mean(self, window: int | None = None, *, window_size: int | None = None) -> float:
        """Sum of the last ``window`` values over the sum of their counts; all updates when
        ``window`` is None. (``window_size=`` is accepted too, MMEngine's name.)"""
        window = self._prepare_read(window, window_size)
        if window is None:
            return self._total / self._total_count
        values = sum(islice(reversed(self._values), window))
        return values / sum(islice(reversed(self._counts), window))

    def min(self, window: int | None = None, *, window_size: int | None = None) -> float:
        """The smallest of the last ``window`` values (of all updates when None)."""
        window = self._prepare_read(window, window_size)
        return self._min if window is None else min(islice(reversed(self._values), window))

    def max(self, window: int | None = None, *, window_size: int | None = None) -> float:
        """The largest of the last ``window`` values (of all updates when None)."""
        window = self._prepare_read(window, window_size)
        return self._max if window is None else max(islice(reversed(self._values), window))

    def statistics(self, method_name: str, window_size: int | None = None) -> float:
        """One statistic by name: 'mean', 'min', 'max' or 'current' (which has no window)."""
        if method_name not in _STATISTICS:
            raise ValueError(f"method_name must be one of {_STATISTICS}, got {method_name!r}")
        if method_name == "current":
            return self.current()
        return getattr(self, method_name)(window_size)

    def state_dict(self) -> dict:
        """The buffer as plain numbers and lists (safe for ``torch.load(weights_only=True)``)."""
        self._fold_unread()
        return {
            "max_length": self.max_length,
            "values": list(self._values),
            "counts": list(self._counts),
            "num_updates": self._num_updates,
            "total": self._total,
            "total_count": self._total_count,
            "min": self._min,
            "max": self._max,
        }

    @classmethod
    def from_state_dict(cls, state: dict) -> HistoryBuffer:
        """A buffer as :meth:`state_dict` described it."""
        buffer = cls(state["max_length"])
        buffer._values.extend(state["values"])
        buffer._counts.extend(state["counts"])
        buffer._num_updates = state["num_updates"]
        buffer._total = state["total"]
        buffer._total_count = state["total_count"]
        buffer._min = state["min"]
        buffer._max = state["max"]
        return buffer

    @classmethod
    def from_history(cls, values: Any, counts: Any, max_length: int = 10_000) -> HistoryBuffer:
        """A buffer that has seen ``values`` with ``counts`` (e.g. an MMEngine buffer's data)."""
        buffer = cls(max_length)
        for value, count in zip(values, counts, strict=True):
            buffer.update(float(value), int(count))
        buffer._fold_unread()
        return buffer

    def __repr__(self) -> str:
        return f"HistoryBuffer(count={self.count}, kept={len(self)}, max_length={self.max_length})"

    def _prepare_read(self, window: int | None, window_size: int | None) -> int | None:
        """Fold unread values in; return the window to read, None meaning all updates."""
        if window_size is not None:
            if window is not None:
                raise TypeError("give the window once: window or window_size, not both")
            window = window_size
        if window is not None and (
            not isinstance(window, int) or isinstance(window, bool) or window < 1
        ):
            raise ValueError(f"window must be a positive int or None, got {window!r}")
        self._fold_unread()
        self._require_values()
        return None if window is None or window >= self._num_updates else window

    def _require_values(self) -> None:
        if not self._values:
            raise ValueError("the buffer holds no values yet; update() it first")

    def _fold_unread(self) -> None:
        """Turn the unread tensors into floats (one transfer per device) and add the unread
        values to the running totals."""
        unread = self._unread
        if not unread:
            return
        tail = [self._values.pop() for _ in range(unread)]
        tail.reverse()
        tail = _materialise(tail)
        self._values.extend(tail)
        self._num_updates += unread
        self._unread = 0
        self._total += sum(tail)
        self._total_count += sum(islice(reversed(self._counts), unread))
        self._min = min(self._min, min(tail))
        self._max = max(self._max, max(tail))


def _as_float(value: Any) -> float:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
        raise TypeError(f"a logged value must be a number or a tensor, got {type(value).__name__}")
    return float(value)


def _materialise(values: list) -> list[float]:
    """``values`` with every tensor replaced by its float; one ``tolist`` per device."""
    by_device: dict[torch.device, list[int]] = {}
    for index, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            by_device.setdefault(value.device, []).append(index)
    for indices in by_device.values():
        tensors = [values[i] for i in indices]
        with torch.no_grad():
            stacked = torch.stack([t if t.ndim == 0 else t.reshape(()) for t in tensors])
        for index, number in zip(indices, stacked.tolist()):
            values[index] = float(number)
    return values
