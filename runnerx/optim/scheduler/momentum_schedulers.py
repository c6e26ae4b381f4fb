"""The momentum schedulers: each shape of ``ParamScheduler`` applied to momentum.

Momentum is ``momentum`` for SGD-like optimizers and ``betas[0]`` for Adam-like ones (kept in
the param group as ``momentum`` too, as MMEngine does, and copied into ``betas``).
"""

from __future__ import annotations

from typing import Any

from runnerx.optim.scheduler.cosine_schedulers import (
    CosineAnnealingParamScheduler,
    CosineRestartParamScheduler,
)
from runnerx.optim.scheduler.decay_schedulers import (
    ExponentialParamScheduler,
    MultiStepParamScheduler,
    PolyParamScheduler,
    StepParamScheduler,
)
from runnerx.optim.scheduler.factor_schedulers import ConstantParamScheduler, LinearParamScheduler
from runnerx.optim.scheduler.one_cycle import OneCycleParamScheduler
from runnerx.optim.scheduler.param_scheduler import INF, per_group, unwrap_optimizer
from runnerx.registry import PARAM_SCHEDULERS


class MomentumSchedulerMixin:
    """Put before a ParamScheduler shape to schedule momentum (no ``param_name`` argument)."""

    def __init__(self, optimizer: Any, *args: Any, **kwargs: Any) -> None:
        inner = unwrap_optimizer(optimizer)
        self.use_betas = "momentum" not in inner.defaults and "betas" in inner.defaults
        if self.use_betas:
            for group in inner.param_groups:
                group["momentum"] = group["betas"][0]
        elif "momentum" not in inner.defaults:
            raise ValueError(
                f"{type(self).__name__} schedules momentum, but {type(inner).__name__} has "
                "neither 'momentum' nor 'betas'"
            )
        super().__init__(optimizer, "momentum", *args, **kwargs)

    def step(self, *args: Any, **kwargs: Any) -> None:
        """Step the schedule (with the validation metrics for ReduceOnPlateauMomentum); for
        Adam-like optimizers copy the new momentum into ``betas[0]``."""
        super().step(*args, **kwargs)
        if self.use_betas and self.begin <= self._global_step < self.end:
            for group in self.optimizer.param_groups:
                group["betas"] = (group["momentum"], *group["betas"][1:])


@PARAM_SCHEDULERS.register_module()
class ConstantMomentum(MomentumSchedulerMixin, ConstantParamScheduler):
    """Momentum times ``factor`` until the last step before ``end`` (ConstantParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class LinearMomentum(MomentumSchedulerMixin, LinearParamScheduler):
    """Momentum scaled linearly from ``start_factor`` to ``end_factor`` (LinearParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class StepMomentum(MomentumSchedulerMixin, StepParamScheduler):
    """Momentum times ``gamma`` every ``step_size`` steps (StepParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class MultiStepMomentum(MomentumSchedulerMixin, MultiStepParamScheduler):
    """Momentum times ``gamma`` at each of ``milestones`` (MultiStepParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class ExponentialMomentum(MomentumSchedulerMixin, ExponentialParamScheduler):
    """Momentum times ``gamma`` every step (ExponentialParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingMomentum(MomentumSchedulerMixin, CosineAnnealingParamScheduler):
    """Cosine momentum annealing to ``eta_min`` (CosineAnnealingParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class CosineRestartMomentum(MomentumSchedulerMixin, CosineRestartParamScheduler):
    """Cosine momentum annealing restarted every period (CosineRestartParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class PolyMomentum(MomentumSchedulerMixin, PolyParamScheduler):
    """Polynomial momentum decay to ``eta_min`` (PolyParamScheduler)."""


@PARAM_SCHEDULERS.register_module(replaceable=True)
class OneCycleMomentum(MomentumSchedulerMixin, OneCycleParamScheduler):
    """Momentum cycled opposite to a OneCycleLR, as torch's ``OneCycleLR(cycle_momentum=True)``.

    Momentum goes from ``max_momentum`` down to ``base_momentum`` while the learning rate
    rises, and back up to ``max_momentum`` while it falls (staying there in the third phase of
    ``three_phase``). Use it next to a OneCycleLR with the same ``total_steps``,
    ``pct_start``, ``anneal_strategy`` and ``three_phase``::

        param_scheduler = [
            dict(type='OneCycleLR', eta_max=0.1, total_steps=1000, by_epoch=False),
            dict(type='OneCycleMomentum', total_steps=1000, by_epoch=False),
        ]

    Not in MMEngine. The group keeps its start/final value as ``max_momentum`` and its
    turning value as ``base_momentum``, as torch does.
    """

    waypoint_roles = ("max", "base", "max")

    def __init__(
        self,
        optimizer: Any,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        three_phase: bool = False,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.max_momentum = max_momentum
        super().__init__(
            optimizer,
            eta_max=base_momentum,
            total_steps=total_steps,
            pct_start=pct_start,
            anneal_strategy=anneal_strategy,
            three_phase=three_phase,
            begin=begin,
            end=end,
            last_step=last_step,
            by_epoch=by_epoch,
            verbose=verbose,
        )

    def _waypoints(self, groups: list[dict]) -> list[tuple[float, float, float]]:
        turns = per_group("base_momentum", self.eta_max, groups)
        tops = per_group("max_momentum", self.max_momentum, groups)
        return [(top, turn, top) for turn, top in zip(turns, tops)]
