"""Schedulers that decay the value: by steps, at milestones, exponentially, polynomially."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from runnerx.optim.scheduler.param_scheduler import INF, _ParamScheduler
from runnerx.registry import PARAM_SCHEDULERS


@PARAM_SCHEDULERS.register_module()
class StepParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` every ``step_size`` steps.

    ``dict(type='StepLR', step_size=30, gamma=0.1)``: a tenth at epochs 30, 60, ...
    """

    epoch_counted = ("step_size",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        step_size: int,
        gamma: float = 0.1,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not step_size > 0:
            raise ValueError(f"step_size must be positive, but got {step_size}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        if self.last_step == 0 or self.last_step % self.step_size != 0:
            return current
        return current * self.gamma


@PARAM_SCHEDULERS.register_module()
class MultiStepParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` at each milestone (steps counted from ``begin``).

    ``dict(type='MultiStepLR', milestones=[8, 11], gamma=0.1, by_epoch=True)``; a milestone
    listed twice multiplies by ``gamma ** 2``.
    """

    epoch_counted = ("milestones",)

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        milestones: Sequence[int],
        gamma: float = 0.1,
        last_step: int = -1,
        begin: int = 0,
        end: int = INF,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        times = self.milestones.get(self.last_step)
        return current * self.gamma**times if times else current


@PARAM_SCHEDULERS.register_module()
class ExponentialParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` every step.

    ``dict(type='ExponentialLR', gamma=0.95)``.
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        gamma: float,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        return current if self.last_step == 0 else current * self.gamma


@PARAM_SCHEDULERS.register_module()
class PolyParamScheduler(_ParamScheduler):
    """Decay the value polynomially to ``eta_min``, reached on the last step before ``end``.

    ``dict(type='PolyLR', eta_min=1e-4, power=0.9, by_epoch=False, begin=0, end=80000)``.
    """

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        eta_min: float = 0,
        power: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.eta_min = eta_min
        self.power = power
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _value(self, group: dict, base: float) -> float:
        current = group[self.param_name]
        if self.last_step == 0:
            return current
        remaining = 1 - 1 / (self.total_iters - self.last_step + 1)
        return (current - self.eta_min) * remaining**self.power + self.eta_min
