"""What a model holds, at a glance: parameter counts per submodule, trainable and frozen, and
the memory its parameters take (ModelSummaryHook logs it when training starts)::

    >>> print(model_summary(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))))
    Sequential: 2.8 K parameters (2.8 K trainable, 0 frozen), 0.01 MB
      name  type    parameters  trainable
      0     Linear       2.1 K      2.1 K
      1     ReLU             0          0
      2     Linear         650        650
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from torch import nn
from torch.nn.parameter import is_lazy

__all__ = ["checked_depth", "model_summary"]

_UNITS = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K"))


def model_summary(model: nn.Module, max_depth: int = 1) -> str:
    """A header with the model's totals (parameters, trainable and frozen, their size in MB,
    buffer values when it has any), then one row per submodule down to ``max_depth`` levels
    (dotted names; 0: the header only). A parameter shared by several modules is counted once
    in each row that holds it and once in the totals; sharded parameters (FSDP's DTensors)
    count at their full size. Lazy parameters, not sized yet, are counted apart."""
    checked_depth(max_depth)
    total, trainable, size, lazy = _count(model.parameters())
    buffers = sum(buffer.numel() for buffer in model.buffers() if not is_lazy(buffer))
    header = (
        f"{type(model).__name__}: {_short(total)} parameters ({_short(trainable)} trainable, "
        f"{_short(total - trainable)} frozen), {size / 1e6:.2f} MB"
    )
    if buffers:
        header += f"; {_short(buffers)} buffer values"
    if lazy:
        header += f"; {lazy} lazy parameter(s) not sized yet"
    rows = [
        (name, type(module).__name__, *_count(module.parameters())[:2])
        for name, module in model.named_modules()
        if name and name.count(".") < max_depth
    ]
    if not rows:
        return header
    table = [("name", "type", "parameters", "trainable")]
    table += [(name, kind, _short(count), _short(train)) for name, kind, count, train in rows]
    widths = [max(len(row[column]) for row in table) for column in range(4)]
    lines = [
        f"  {name:<{widths[0]}}  {kind:<{widths[1]}}  {count:>{widths[2]}}  {train:>{widths[3]}}"
        for name, kind, count, train in table
    ]
    return "\n".join([header, *lines])


def checked_depth(max_depth: Any, key: str = "max_depth") -> int:
    """``max_depth`` when it is an int >= 0, else a ValueError naming ``key``."""
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"{key} must be an int >= 0 (0: the totals line only), got {max_depth!r}")
    return max_depth


def _count(parameters: Iterable[nn.Parameter]) -> tuple[int, int, int, int]:
    """(elements, trainable elements, bytes, lazy parameters) of ``parameters``."""
    total = trainable = size = lazy = 0
    for parameter in parameters:
        if is_lazy(parameter):
            lazy += 1
            continue
        count = parameter.numel()
        total += count
        trainable += count if parameter.requires_grad else 0
        size += count * parameter.element_size()
    return total, trainable, size, lazy


def _short(count: int) -> str:
    """``650``, ``2.1 K``, ``11.2 M``: counts of a thousand and more with one decimal."""
    for scale, unit in _UNITS:
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return str(count)
