"""HistoryBuffer: the recent values of one logged scalar, and exact statistics over all of them.

Updating costs the same at iteration 10 and at iteration 40,000: a value is appended to a
bounded deque and nothing is copied. A 0-dim torch tensor is stored as it is, so updating
never waits for the device; the tensors are turned into floats together, in one transfer,
the first time something is read (which only logging iterations do).

Code that records a scalar on every iteration (the default hooks) uses the cheapest way in:
:meth:`HistoryBuffer.appender` hands out a plain ``list.append`` whose values the buffer takes
in when it is next read or updated.
"""

from __future__ import annotations

import math
import numbers
from collections import deque
from collections.abc import Callable, Iterable
from itertools import islice, repeat
from typing import Any

import numpy as np
import torch

from runnerx.utils.errors import ValueAssertionError, ValueTypeError

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

        append = buffer.appender()   # every iteration: a list's append, nothing checked
        append(0.5)                  # a float or a one-element torch.Tensor, count 1
        if step % 256 == 0:
            buffer.limit_unread()    # keeps a run that nobody reads bounded
    """

    #: statistics added with :meth:`register_statistics`, by name
    _custom_statistics: dict[str, Callable[..., Any]] = {}

    def __init__(
        self,
        log_history: Iterable[Any] = (),
        count_history: Iterable[int | float] = (),
        max_length: int = 10_000,
    ) -> None:
        """MMEngine's arguments: the values seen so far and their counts (both empty for a
        new buffer; nested ones, such as 1 x N arrays, are read row by row, as MMEngine's
        buffer flattens them), and how many values to keep."""
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1:
            raise ValueError(f"max_length must be a positive int, got {max_length!r}")
        self.max_length = max_length
        self._values: deque[Any] = deque(maxlen=max_length)
        self._counts: deque[int | float] = deque(maxlen=max_length)
        # The newest `_unread` entries may hold tensors and are not yet in the running totals.
        # Folding them in before there are max_length of them means none is ever dropped unread.
        self._unread = 0
        self._fold_at = min(max_length, _MAX_UNREAD)
        # Values recorded through appender() (count 1), newer than everything in _values; the
        # list object is never replaced, since the appenders handed out hold its append.
        self._pending: list[Any] = []
        self._num_updates = 0
        self._total = 0.0
        self._total_count = 0
        self._min = math.inf
        self._max = -math.inf
        # What update() was last given, until folded; then the type current_as_recorded()
        # gives the newest value (int or bool, None: float). Worked out when folding, off
        # the update path.
        self._newest_given: Any = None
        self._newest_type: type | None = None
        log_history, count_history = _flat(log_history), _flat(count_history)
        if len(log_history) != len(count_history):
            raise ValueAssertionError(
                f"HistoryBuffer: log_history has {len(log_history)} values but count_history "
                f"{len(count_history)} counts; give one count per value"
            )
        history = list(zip(log_history, count_history))
        for value, count in history:
            self.update(float(value), count.item() if hasattr(count, "item") else count)
        if history:
            fold_buffers((self,))

    def update(self, log_val: Any, count: int | float = 1) -> None:
        """Record ``log_val`` (a Python number, a numpy scalar or a one-element tensor) as the
        sum of ``count`` observations (an int or, as MMEngine allows, a float)."""
        given = value = log_val
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise ValueTypeError(  # MMEngine: a TypeError
                    f"a logged tensor must hold one value, got shape {tuple(value.shape)}"
                )
        else:
            value = _as_float(value)
        if type(count) is not int:  # the usual count checked first, without the ABCs
            if isinstance(count, bool) or not isinstance(count, numbers.Real):
                raise TypeError(f"count must be a number, got {type(count).__name__}")
            # plain Python numbers only, so that state_dict() loads with weights_only=True
            count = int(count) if isinstance(count, numbers.Integral) else float(count)
        if self._pending:  # appended values are older than this one
            self._take_pending()
        self._values.append(value)
        self._counts.append(count)
        self._newest_given = given
        self._unread += 1
        if self._unread >= self._fold_at:
            fold_buffers((self,))

    def appender(self) -> Callable[[Any], None]:
        """The fastest way to record a value every iteration: a plain ``list.append``.

        Each value it appends counts once, exactly as ``update(value)`` would, but nothing is
        checked: the caller makes sure it is a ``float`` or a one-element ``torch.Tensor``
        (and sends anything else to :meth:`update`). The buffer takes the values in when it
        is next read or updated. Whoever appends calls :meth:`limit_unread` every few hundred
        values, so that a run nobody reads keeps a bounded number of tensors alive.
        """
        return self._pending.append

    def limit_unread(self) -> None:
        """Fold the unread values in (turning their tensors into floats) once
        :data:`_MAX_UNREAD` of them, or ``max_length``, have piled up; else do nothing."""
        if self._unread + len(self._pending) >= self._fold_at:
            fold_buffers((self,))

    @property
    def count(self) -> int:
        """How many updates were made over the buffer's whole life (kept values or not)."""
        return self._num_updates + self._unread + len(self._pending)

    def __len__(self) -> int:
        """How many values the buffer keeps now (at most ``max_length``)."""
        return min(len(self._values) + len(self._pending), self.max_length)

    def current(self) -> float:
        """The newest value."""
        fold_buffers((self,))
        self._require_values()
        return self._values[-1]

    def current_as_recorded(self) -> float | int | bool:
        """The newest value, as an int or a bool when :meth:`update` was given one (a Python
        or numpy integer or bool, or an integer or bool tensor), else :meth:`current`'s float.
        MMEngine's buffer keeps the type it was given, so a val/test line shows a metric of 7
        as ``7`` and a flag as ``True``."""
        value = self.current()
        return value if self._newest_type is None else self._newest_type(value)

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

    @property
    def data(self) -> tuple[np.ndarray, np.ndarray]:
        """MMEngine's view of the kept history: ``(values, counts)`` as numpy arrays."""
        fold_buffers((self,))
        return np.array(self._values, dtype=float), np.array(self._counts)

    @classmethod
    def register_statistics(cls, method: Callable[..., Any]) -> Callable[..., Any]:
        """Add a statistic that :meth:`statistics` finds by the function's name, as MMEngine's
        decorator does: ``method(buffer, *args, **kwargs)``, which may read ``buffer.data``."""
        cls._custom_statistics[method.__name__] = method
        return method

    def statistics(self, method_name: str, *args: Any, **kwargs: Any) -> Any:
        """One statistic by name: 'mean', 'min', 'max', 'current' (which has no window) or one
        added with :meth:`register_statistics`; the other arguments go to it (the window)."""
        custom = self._custom_statistics.get(method_name)
        if custom is not None:
            return custom(self, *args, **kwargs)
        if method_name not in _STATISTICS:  # a KeyError, as in MMEngine
            known = (*_STATISTICS, *self._custom_statistics)
            raise KeyError(f"method_name must be one of {known}, got {method_name!r}")
        if method_name == "current":
            return self.current()
        return getattr(self, method_name)(*args, **kwargs)

    def state_dict(self) -> dict:
        """The buffer as plain numbers and lists (safe for ``torch.load(weights_only=True)``)."""
        fold_buffers((self,))
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
        buffer = cls(max_length=state["max_length"])
        buffer.load_state_dict(state)
        return buffer

    def load_state_dict(self, state: dict) -> None:
        """Become the buffer :meth:`state_dict` described, in place (the appenders handed out
        go on recording into it); what was recorded before is dropped."""
        self.max_length = state["max_length"]
        self._values = deque(state["values"], maxlen=self.max_length)
        self._counts = deque(state["counts"], maxlen=self.max_length)
        self._fold_at = min(self.max_length, _MAX_UNREAD)
        self._unread = 0
        self._pending.clear()
        self._newest_given = self._newest_type = None
        self._num_updates = state["num_updates"]
        self._total = state["total"]
        self._total_count = state["total_count"]
        self._min = state["min"]
        self._max = state["max"]

    @classmethod
    def from_history(cls, values: Any, counts: Any, max_length: int = 10_000) -> HistoryBuffer:
        """A buffer that has seen ``values`` with ``counts`` (e.g. an MMEngine buffer's data)."""
        return cls(values, counts, max_length)

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
        fold_buffers((self,))
        self._require_values()
        return None if window is None or window >= self._num_updates else window

    def _require_values(self) -> None:
        if not self._values:
            raise ValueError("the buffer holds no values yet; update() it first")

    def _take_pending(self) -> None:
        """Move the appended values behind the unread ones, unconverted; fold whenever
        ``_fold_at`` are unread, so that none leaves the deque before it is counted."""
        pending = self._pending
        while pending:
            room = self._fold_at - self._unread
            piece = pending[:room]
            del pending[:room]
            self._values.extend(piece)
            self._counts.extend(repeat(1, len(piece)))
            self._unread += len(piece)
            if self._unread >= self._fold_at:
                fold_buffers((self,))

    def _take_unread(self) -> list:
        """Remove the unread values (those in the deque, then the appended ones), oldest
        first; :meth:`_add_folded` puts them back as floats."""
        tail = [self._values.pop() for _ in range(self._unread)]
        tail.reverse()
        tail.extend(self._pending)
        return tail

    def _add_folded(self, values: list[float]) -> None:
        """Put back what :meth:`_take_unread` removed, now floats, and count it."""
        unread, appended = self._unread, len(self._pending)
        self._total_count += sum(islice(reversed(self._counts), unread)) + appended
        self._values.extend(values)
        if appended:
            self._counts.extend(repeat(1, appended))
            self._pending.clear()
        # appended values are newer than the given ones
        self._newest_type = None if appended else _integral_type(self._newest_given)
        self._newest_given = None
        self._num_updates += unread + appended
        self._unread = 0
        self._total += sum(values)
        self._min = min(self._min, *values)
        self._max = max(self._max, *values)


def fold_buffers(buffers: Iterable[HistoryBuffer]) -> None:
    """Bring the unread values of ``buffers`` into their running totals, turning every
    tensor among them into a float in one transfer per device (not one per buffer)."""
    taken: list[tuple[HistoryBuffer, list]] = []
    tensors: list = []  # the tensors of every buffer's unread values, in a row
    # where they go back: (tail, first of them in `tensors`, their positions; None: all)
    places: list[tuple[list, int, list[int] | None]] = []
    for buffer in buffers:
        if not (buffer._unread or buffer._pending):
            continue
        tail = buffer._take_unread()
        taken.append((buffer, tail))
        kinds = set(map(type, tail))  # in C: most buffers hold floats only, or tensors only
        if float not in kinds:
            places.append((tail, len(tensors), None))
            tensors.extend(tail)
        elif len(kinds) > 1:
            positions = [i for i, value in enumerate(tail) if type(value) is not float]
            places.append((tail, len(tensors), positions))
            tensors.extend(tail[i] for i in positions)
    if tensors:
        numbers = _to_floats(tensors)
        for tail, first, positions in places:
            if positions is None:
                tail[:] = numbers[first : first + len(tail)]
            else:
                for offset, position in enumerate(positions):
                    tail[position] = numbers[first + offset]
    for buffer, tail in taken:
        buffer._add_folded(tail)


def _flat(history: Iterable[Any]) -> list:
    """The values of ``history`` in order, nested lists, tuples, arrays and tensors (a 1 x N
    history) read row by row; scalars and 0-dim arrays or tensors are kept as they are."""
    if isinstance(history, (np.ndarray, torch.Tensor)):
        return history.reshape(-1).tolist()
    values = []
    for item in history:
        if isinstance(item, (list, tuple)) or getattr(item, "ndim", 0):
            values.extend(_flat(item))
        else:
            values.append(item)
    return values


def _as_float(value: Any) -> float:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__float__"):
        raise TypeError(f"a logged value must be a number or a tensor, got {type(value).__name__}")
    try:
        return float(value)
    except TypeError:  # NumPy 2 refuses float() of a one-element array; MMEngine takes .item()
        if getattr(value, "size", None) != 1:
            raise
        return float(value.item())


def _integral_type(value: Any) -> type | None:
    """``bool`` or ``int`` when ``value`` is a bool or an integer (Python, numpy or a tensor's
    dtype), None otherwise."""
    if isinstance(value, int):  # a bool is an int too
        return bool if isinstance(value, bool) else int
    if isinstance(value, torch.Tensor):
        dtype = value.dtype
        if dtype == torch.bool:
            return bool
        return None if dtype.is_floating_point or dtype.is_complex else int
    kind = getattr(getattr(value, "dtype", None), "kind", None)  # numpy scalars and arrays
    return bool if kind == "b" else int if kind in ("i", "u") else None


def _to_floats(tensors: list[torch.Tensor]) -> list[float]:
    """The value of each one-element tensor, read with one ``tolist`` per device (for CPU
    tensors, where reading waits for nothing, one ``item()`` each: half the time of a stack)."""
    if tensors[0].is_cpu:
        return [float(tensor.item()) for tensor in tensors]  # right for any device, fast here
    with torch.no_grad():
        try:  # the usual case: 0-dim tensors on one device
            numbers = torch.stack(tensors).tolist()
        except RuntimeError:  # several devices or shapes
            numbers = _materialise_by_device(tensors)
    return [float(number) for number in numbers]


def _materialise_by_device(tensors: list[torch.Tensor]) -> list:
    by_device: dict[torch.device, list[int]] = {}
    for index, tensor in enumerate(tensors):
        by_device.setdefault(tensor.device, []).append(index)
    numbers: list = [None] * len(tensors)
    for indices in by_device.values():
        stacked = torch.stack([tensors[i].reshape(()) for i in indices])
        for index, number in zip(indices, stacked.tolist(), strict=True):
            numbers[index] = number
    return numbers
