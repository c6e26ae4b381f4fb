"""The learning-rate schedulers: each shape of ``ParamScheduler`` applied to ``lr``.

They take the shape's arguments without ``param_name``, e.g.
``dict(type='CosineAnnealingLR', T_max=100, eta_min=1e-5)``.
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
from runnerx.registry import PARAM_SCHEDULERS


class LRSchedulerMixin:
    """Put before a ParamScheduler shape to schedule ``lr`` (no ``param_name`` argument)."""

    def __init__(self, optimizer: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(optimizer, "lr", *args, **kwargs)


@PARAM_SCHEDULERS.register_module()
class ConstantLR(LRSchedulerMixin, ConstantParamScheduler):
    """``lr`` times ``factor`` until the last step before ``end`` (ConstantParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class LinearLR(LRSchedulerMixin, LinearParamScheduler):
    """Linear ``lr`` warm-up from ``start_factor`` to ``end_factor`` (LinearParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class StepLR(LRSchedulerMixin, StepParamScheduler):
    """``lr`` times ``gamma`` every ``step_size`` steps (StepParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class MultiStepLR(LRSchedulerMixin, MultiStepParamScheduler):
    """``lr`` times ``gamma`` at each of ``milestones`` (MultiStepParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class ExponentialLR(LRSchedulerMixin, ExponentialParamScheduler):
    """``lr`` times ``gamma`` every step (ExponentialParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingLR(LRSchedulerMixin, CosineAnnealingParamScheduler):
    """Cosine ``lr`` annealing to ``eta_min`` over ``T_max`` (CosineAnnealingParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class CosineRestartLR(LRSchedulerMixin, CosineRestartParamScheduler):
    """Cosine ``lr`` annealing restarted every period (CosineRestartParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class PolyLR(LRSchedulerMixin, PolyParamScheduler):
    """Polynomial ``lr`` decay to ``eta_min`` (PolyParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class OneCycleLR(LRSchedulerMixin, OneCycleParamScheduler):
    """The 1cycle ``lr`` policy peaking at ``eta_max`` (OneCycleParamScheduler)."""
