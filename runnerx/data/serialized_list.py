"""A list of data infos held as one ``bytes`` buffer of pickles plus an array of their ends,
and the index checks that BaseDataset applies to it and to a plain list alike.

Dataloader workers forked from the main process share its memory until a page is written,
and reading a Python object writes its reference count. A list of 100,000 dicts is millions
of objects spread over all its pages, so every worker ends up with its own copy; one bytes
object and one int64 array are two objects, whose counts sit in two pages. The ends are a
numpy ``int64`` array, as in MMEngine, so code ported from it (``data_address[i].item()``)
runs; the buffer is ``bytes`` (MMEngine: a ``uint8`` array), which slices alike.
"""

from __future__ import annotations

import itertools
import operator
import pickle
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np


def serialize_list(items: Sequence[Any]) -> tuple[bytes, np.ndarray]:
    """``(data_bytes, data_address)``: the pickles of ``items`` back to back, and where each
    ends (``data_address[i]`` is the end of item ``i``, as in MMEngine)."""
    pickles = [pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL) for item in items]
    return b"".join(pickles), _ends(pickles)


def _ends(pieces: Iterable[bytes | memoryview]) -> np.ndarray:
    """Where each of ``pieces`` ends when they are joined: an ``int64`` array."""
    return np.fromiter(itertools.accumulate(map(len, pieces)), dtype=np.int64)


def load_item(data_bytes: bytes, data_address: np.ndarray, index: int) -> Any:
    """Item ``index`` (``0 <= index < len(data_address)``), unpickled: a fresh object."""
    start = data_address[index - 1] if index > 0 else 0
    return pickle.loads(memoryview(data_bytes)[start : data_address[index]])


def serialized_subset(
    data_bytes: bytes, data_address: np.ndarray, positions: Sequence[int]
) -> tuple[bytes, np.ndarray]:
    """``(data_bytes, data_address)`` of the items at ``positions`` (valid, non-negative), in
    that order, without unpickling them; a run of neighbours is cut out in one slice."""
    if isinstance(positions, range) and positions.step == 1 and len(positions) > 0:
        start = data_address[positions.start - 1] if positions.start > 0 else 0
        ends = data_address[positions.start : positions.stop]
        return data_bytes[start : ends[-1]], ends - start  # a new array, not a view
    view = memoryview(data_bytes)
    pieces = [view[data_address[i - 1] if i > 0 else 0 : data_address[i]] for i in positions]
    return b"".join(pieces), _ends(pieces)


def check_index(idx: int, length: int) -> int:
    """``idx`` (negative counts from the end) as a position in ``range(length)``."""
    position = operator.index(idx)
    if position < 0:
        position += length
    if not 0 <= position < length:
        raise IndexError(f"index {idx} is out of range for a dataset of {length} samples")
    return position


def subset_positions(indices: Any, length: int) -> range | list[int]:
    """The positions ``indices`` picks out of ``length`` entries: an int ``n`` takes the first
    ``n`` (the last ``-n`` if negative; all when there are fewer, as list slicing does), a
    sequence the listed ones."""
    if isinstance(indices, Sequence) and not isinstance(indices, (str, bytes)):
        return [check_index(index, length) for index in indices]
    try:
        count = operator.index(indices)
    except TypeError:
        raise TypeError(
            f"indices must be an int or a sequence of ints, but got {type(indices).__name__}: "
            f"{indices!r}"
        ) from None
    return range(length)[:count] if count >= 0 else range(length)[count:]
