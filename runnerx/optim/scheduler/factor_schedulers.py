"""Schedulers that scale the value by a factor for a while: constant and linear (warm-up)."""

from __future__ import annotations

from typing import Any

from runnerx.optim.scheduler.param_scheduler import INF, _ParamScheduler
from runnerx.registry import PARAM_SCHEDULERS


@PARAM_SCHEDULERS.register_module()
class ConstantParamScheduler(_ParamScheduler):
    """Multiply the value by ``factor`` from ``begin``; restore it on the last step before ``end``.

    ``dict(type='ConstantParamScheduler', param_name='lr', factor=0.1, end=5)`` runs steps 0-3
    at a tenth of the value and step 4 onwards at the full value (torch's
    ``ConstantLR(total_iters=4)``). Without ``end`` the value is never restored.
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        factor: float = 1.0 / 3,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"factor must be between 0 and 1, but got {factor}")
        self.factor = factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        if self.last_step == 0:
            return current * self.factor
        if self.last_step == self.total_iters:
            return current * (1.0 / self.factor)
        return current


@PARAM_SCHEDULERS.register_module()
class LinearParamScheduler(_ParamScheduler):
    """Scale the value by a factor going linearly from ``start_factor`` (at ``begin``) to
    ``end_factor`` (on the last step before ``end``): the usual warm-up.

    ``dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500)`` warms the
    learning rate up over the first 500 iterations (torch's ``LinearLR(total_iters=499)``).
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(
                f"start_factor must be in (0, 1], but got {start_factor}: each step scales the "
                "current value, so a schedule cannot grow from 0 (start from e.g. 0.001)"
            )
        if not 0 <= end_factor <= 1:
            raise ValueError(f"end_factor must be between 0 and 1, but got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        if self.last_step == 0:
            return current * self.start_factor
        change = self.end_factor - self.start_factor
        return current * (
            1.0 + change / (self.total_iters * self.start_factor + (self.last_step - 1) * change)
        )
