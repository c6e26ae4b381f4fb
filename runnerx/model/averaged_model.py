"""Averaged copies of a model's weights: EMA, momentum-annealed EMA and SWA (MMEngine's names).

Every update works on whole lists of tensors (``torch._foreach_*``) under ``no_grad`` and
reads nothing back from the device, so updating after each iteration is cheap::

    custom_hooks = [dict(type='EMAHook', ema_type='ExponentialMovingAverage', momentum=0.0002)]
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import torch
from torch import nn

from runnerx.registry import MODELS
from runnerx.utils.errors import ValueAssertionError

_FOREACH_LERP = hasattr(torch, "_foreach_lerp_")
_FOREACH_COPY = hasattr(torch, "_foreach_copy_")


class BaseAveragedModel(nn.Module):
    """A running average of a model's parameters (and buffers, with ``update_buffers=True``).

    ``module`` is a frozen deep copy of ``model`` (on ``device`` when given); ``forward`` runs
    it. ``update_parameters(model)`` counts a step: the first copies ``model``'s weights, later
    ones average them in every ``interval`` steps. Without ``update_buffers`` the buffers
    (e.g. BatchNorm statistics) are copied on every step. ``steps`` is saved in ``state_dict``.

    A subclass gives its averaging weight with ``lerp_weight(steps)`` (averaged moves that
    fraction of the way to the model's value, for all tensors at once) or, as in MMEngine,
    overrides ``avg_func(averaged_param, source_param, steps)`` to update one tensor in place.
    """

    def __init__(
        self,
        model: nn.Module,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(interval, int) or interval < 1:
            raise ValueError(f"interval must be a positive int, but got {interval!r}")
        self.module = copy.deepcopy(model).requires_grad_(False)
        if device is not None:
            self.module = self.module.to(device)
        self.interval = interval
        self.update_buffers = update_buffers
        self.register_buffer("steps", torch.tensor(0, dtype=torch.long, device=device))
        self._step_count = 0  # mirrors `steps` without reading it back from the device
        self.register_load_state_dict_post_hook(_sync_step_count)
        averaged = self._averaged_tensors(self.module)
        self._float_index = [i for i, t in enumerate(averaged) if t.is_floating_point()]
        self._other_index = [i for i, t in enumerate(averaged) if not t.is_floating_point()]
        self._per_tensor = type(self).avg_func is not BaseAveragedModel.avg_func

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged model."""
        return self.module(*args, **kwargs)

    def lerp_weight(self, steps: int) -> float:
        """How far the averaged weights move towards the model's at step ``steps``."""
        raise NotImplementedError(f"{type(self).__name__} must define lerp_weight or avg_func")

    def avg_func(
        self, averaged_param: torch.Tensor, source_param: torch.Tensor, steps: int
    ) -> None:
        """Update one averaged tensor in place (MMEngine's per-tensor hook)."""
        averaged_param.lerp_(source_param, self.lerp_weight(steps))

    @torch.no_grad()
    def update_parameters(self, model: nn.Module) -> None:
        """Count one step and fold ``model``'s current weights into the average."""
        averaged = self._averaged_tensors(self.module)
        source = self._averaged_tensors(model)
        if len(source) != len(averaged):
            raise ValueError(
                f"the model has {len(source)} tensors to average but the averaged copy has "
                f"{len(averaged)}: update_parameters needs the model the average was made from"
            )
        source = _on_device_of(averaged, source)
        steps = self._step_count
        if steps == 0:
            _copy_all(averaged, source)
        elif steps % self.interval == 0:
            floats = [averaged[i] for i in self._float_index]
            float_sources = [source[i] for i in self._float_index]
            if self._per_tensor:
                for avg, src in zip(floats, float_sources):
                    self.avg_func(avg, src, steps)
            else:
                _lerp_all(floats, float_sources, self.lerp_weight(steps))
            others = self._other_index
            _copy_all([averaged[i] for i in others], [source[i] for i in others])
        if not self.update_buffers:
            own = list(self.module.buffers())
            _copy_all(own, _on_device_of(own, list(model.buffers())))
        self.steps.add_(1)
        self._step_count += 1

    def _averaged_tensors(self, model: nn.Module) -> list[torch.Tensor]:
        """The tensors that are averaged, in a fixed order: parameters, then buffers if
        ``update_buffers`` (the order MMEngine's EMAHook swaps them in)."""
        tensors = list(model.parameters())  # used under no_grad only: no detach needed
        if self.update_buffers:
            tensors += model.buffers()
        return tensors


def _sync_step_count(module: BaseAveragedModel, incompatible_keys: Any) -> None:
    module._step_count = int(module.steps)


def _on_device_of(targets: list[torch.Tensor], sources: list[torch.Tensor]) -> list[torch.Tensor]:
    """``sources`` on the device of ``targets`` (a model lives on one device)."""
    if targets and sources and sources[0].device != targets[0].device:
        return [source.to(targets[0].device) for source in sources]
    return sources


def _lerp_all(averaged: list[torch.Tensor], sources: list[torch.Tensor], weight: float) -> None:
    if _FOREACH_LERP and averaged:
        torch._foreach_lerp_(averaged, sources, weight)
    else:
        for avg, src in zip(averaged, sources):
            avg.lerp_(src, weight)


def _copy_all(targets: list[torch.Tensor], sources: list[torch.Tensor]) -> None:
    if _FOREACH_COPY and targets:
        torch._foreach_copy_(targets, sources)
    else:
        for target, source in zip(targets, sources):
            target.copy_(source)


@MODELS.register_module()
class ExponentialMovingAverage(BaseAveragedModel):
    """Exponential moving average: ``averaged = (1 - momentum) * averaged + momentum * model``.

    ``momentum`` is the weight of the new value (small, e.g. 0.0002), not an optimizer's
    momentum.
    """

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(model, interval, device, update_buffers)
        if not 0.0 < momentum < 1.0:
            raise ValueAssertionError(f"momentum must be in (0, 1), but got {momentum}")
        if momentum > 0.5:
            from runnerx.logging import print_log

            print_log(  # in the run's log, as MMEngine gives it (printed outside a run)
                f"EMA momentum {momentum} is the weight of the *new* value and is usually small "
                "(e.g. 0.0002); check that this is what you meant",
                logger="current",
                level=logging.WARNING,
            )
        self.momentum = momentum

    def lerp_weight(self, steps: int) -> float:
        """The constant ``momentum``."""
        return self.momentum


@MODELS.register_module()
class MomentumAnnealingEMA(ExponentialMovingAverage):
    """EMA whose momentum starts large and anneals: ``max(momentum, gamma / (gamma + steps))``."""

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        gamma: int = 100,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(model, momentum, interval, device, update_buffers)
        if gamma <= 0:
            raise ValueAssertionError(f"gamma must be > 0, but got {gamma}")
        self.gamma = gamma

    def lerp_weight(self, steps: int) -> float:
        """The annealed momentum at ``steps``."""
        return max(self.momentum, self.gamma / (self.gamma + steps))


@MODELS.register_module()
class StochasticWeightAverage(BaseAveragedModel):
    """Stochastic weight averaging: the plain mean of the weights seen at each update."""

    def lerp_weight(self, steps: int) -> float:
        """``1 / (number of averages so far + 1)``."""
        return 1.0 / (steps // self.interval + 1)
