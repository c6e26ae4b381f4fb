"""ReduceOnPlateau: lower a hyper-parameter when a validation metric stops improving."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from runnerx.logging.logger import print_log
from runnerx.optim.scheduler.lr_schedulers import LRSchedulerMixin
from runnerx.optim.scheduler.momentum_schedulers import MomentumSchedulerMixin
from runnerx.optim.scheduler.param_scheduler import (
    INF,
    _ParamScheduler,
    per_group,
    unwrap_optimizer,
)
from runnerx.registry import PARAM_SCHEDULERS
from runnerx.suggest import did_you_mean
from runnerx.utils.errors import ValueAssertionError


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauParamScheduler(_ParamScheduler):
    """Multiply the value by ``factor`` once ``monitor`` has not improved for more than
    ``patience`` validations (torch's ``ReduceLROnPlateau``, ``mode`` renamed ``rule``)::

        param_scheduler = dict(type='ReduceOnPlateauLR', monitor='accuracy/top1',
                               rule='greater', factor=0.5, patience=2)

    The ParamSchedulerHook calls ``step()`` after every training epoch, which only counts the
    epoch, and ``step(metrics)`` with the validation metrics, which reads ``metrics[monitor]``
    when the epochs counted so far are in ``[begin, end)``. A value is an improvement when it
    beats the best so far by ``threshold`` (``threshold_rule='rel'``: a fraction of the best,
    'abs': an amount). After a reduction, ``cooldown`` validations are not counted as bad.
    The value never goes below ``min_value`` (one per param group, or one for all), and a
    change smaller than ``eps`` is skipped. Epoch-based only, as in MMEngine.

    The best value starts at +-infinity; MMEngine starts it at +-1e9, so there a first metric
    beyond that never counts as an improvement (a bug, not kept).
    """

    need_val_args = True

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        monitor: str = "loss",
        rule: str = "less",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_rule: str = "rel",
        cooldown: int = 0,
        min_value: float | list[float] = 0.0,
        eps: float = 1e-8,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if not by_epoch:
            raise ValueAssertionError(
                f"{name} acts on validation metrics, once per validation epoch: by_epoch must be "
                "True (as in MMEngine), but got by_epoch=False"
            )
        if rule not in ("less", "greater"):
            raise ValueError(f"{name}: rule must be 'less' or 'greater', but got {rule!r}")
        if threshold_rule not in ("rel", "abs"):
            raise ValueError(
                f"{name}: threshold_rule must be 'rel' or 'abs', but got {threshold_rule!r}"
            )
        if not 0 <= factor < 1:
            raise ValueError(f"{name}: factor must be >= 0 and < 1, but got {factor!r}")
        counts = {"threshold": threshold, "patience": patience, "cooldown": cooldown}
        for arg, value in counts.items():
            if value < 0:
                raise ValueError(f"{name}: {arg} must be >= 0, but got {value!r}")
        self.monitor = monitor
        self.rule = rule
        self.factor = factor
        self.patience = patience
        self.threshold = threshold
        self.threshold_rule = threshold_rule
        self.cooldown = cooldown
        groups = unwrap_optimizer(optimizer).param_groups
        self.min_values = per_group("min_value", min_value, groups)
        self.eps = eps
        self.rule_worse = math.inf if rule == "less" else -math.inf
        self.best = self.rule_worse
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    @classmethod
    def build_iter_from_epoch(cls, *args: Any, **kwargs: Any) -> _ParamScheduler:
        """Refused: the schedule moves on validation metrics, which come once per validation
        epoch, so there is nothing to spread over iterations (MMEngine refuses it too)."""
        raise ValueError(
            f"{cls.__name__} steps on validation metrics, so it cannot be converted to an "
            "iteration-based schedule; drop convert_to_iter_based"
        )

    def step(self, metrics: Mapping | None = None) -> None:
        """Without ``metrics`` count one epoch; with the validation metrics, inside
        ``[begin, end)``, update the best value and reduce the value if it is time."""
        if metrics is None:
            self._global_step += 1
        elif not isinstance(metrics, Mapping):
            raise TypeError(
                f"{type(self).__name__}.step takes the validation metrics as a dict, but got "
                f"{type(metrics).__name__}"
            )
        elif self.begin <= self._global_step < self.end:
            self.last_step += 1
            self._observe(self._monitored(metrics))
        self._last_value = [group[self.param_name] for group in self.optimizer.param_groups]

    def _monitored(self, metrics: Mapping) -> float:
        value = metrics.get(self.monitor)
        if value is None:
            hint = did_you_mean(self.monitor, metrics)
            raise KeyError(
                f"param_scheduler ({type(self).__name__}): monitor={self.monitor!r} is not among "
                f"the validation metrics (available: {', '.join(map(repr, metrics)) or 'none'})"
                f"{hint}"
            )
        return float(value)

    def _observe(self, value: float) -> None:
        if self._is_better(value):
            self.best = value
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            self._reduce()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0

    def _is_better(self, value: float) -> bool:
        best, threshold = self.best, self.threshold
        if self.rule == "less":
            bar = best * (1 - threshold) if self.threshold_rule == "rel" else best - threshold
            return value < bar
        bar = best * (1 + threshold) if self.threshold_rule == "rel" else best + threshold
        return value > bar

    def _reduce(self) -> None:
        name = self.param_name
        for index, (group, floor) in enumerate(zip(self.optimizer.param_groups, self.min_values)):
            current = float(group[name])
            reduced = max(current * self.factor, floor)
            if current - reduced > self.eps:
                group[name] = reduced
                self.print_value(self.verbose, index, reduced)

    def print_value(self, is_verbose: bool, group: int, value: float) -> None:
        """As :meth:`_ParamScheduler.print_value`, also saying at which epoch (MMEngine's line)."""
        if is_verbose:
            print_log(
                f"Adjusting parameter value of group {group} to {value:.4e} in epoch "
                f"{self.last_step}.",
                "current",
            )


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauLR(LRSchedulerMixin, ReduceOnPlateauParamScheduler):
    """``lr`` times ``factor`` when ``monitor`` stops improving (ReduceOnPlateauParamScheduler)."""


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauMomentum(MomentumSchedulerMixin, ReduceOnPlateauParamScheduler):
    """Momentum (Adam's ``betas[0]``) times ``factor`` when ``monitor`` stops improving
    (ReduceOnPlateauParamScheduler)."""
