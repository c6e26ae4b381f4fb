"""OptimWrapper: turns a loss into a parameter update (accumulation, clipping, step, zero_grad)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from types import MethodType
from typing import Any

import torch
from torch import nn

from runnerx.optim.grad_clip import build_grad_clip
from runnerx.optim.mmengine_state import regroup_mmengine_state
from runnerx.registry import OPTIM_WRAPPERS
from runnerx.utils.errors import ValueAssertionError

_NO_CONTEXT = nullcontext()  # reusable: entering it does nothing
_NO_KWARGS: Mapping[str, Any] = {}


def current_message_hub(create: bool = True) -> Any:
    """The MessageHub of the current run (where the grad norm and loss scale are logged);
    when there is none yet, one named 'runnerx' is created, or None returned if not ``create``
    (a hub made before a Runner exists is not the one the Runner logs)."""
    from runnerx.logging.message_hub import MessageHub

    return MessageHub.get_current_instance() if create else MessageHub._current


def _check_accumulative_counts(value: Any) -> int:
    """``value`` as an int >= 1; a float with a whole value (``4.0``, as MMEngine configs
    compute it from batch sizes) is taken as that int."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueAssertionError(
            "optim_wrapper.accumulative_counts must be a whole number >= 1 (an int, or a float "
            "such as 2.0: the number of iterations whose gradients make one update), but got "
            f"{value!r}"
        )
    return value


def _log(message: str, level: int = logging.INFO) -> None:
    """Log to the run's logger (printed when there is none), as MMEngine does."""
    from runnerx.logging import print_log

    print_log(message, logger="current", level=level)


def _log_epoch_end_windows(counts: int, epoch_length: int) -> None:
    """Say (once, as training starts) that each epoch ends with a shorter window, and why."""
    last = epoch_length % counts
    _log(
        f"optim_wrapper.accumulative_counts={counts} does not divide the {epoch_length} "
        "iterations of an epoch: accumulation windows restart at every epoch, so each epoch "
        f"ends with a window of {last} iteration(s) (its loss divided by {last}, not {counts}) "
        "and an optimizer step. This keeps a checkpoint saved at an epoch end exact to resume; "
        "MMEngine's windows run across epochs, so this config's updates differ from MMEngine's "
        f"(choose accumulative_counts dividing {epoch_length} to train the same)"
    )


class _Replaceable:
    """An OptimWrapper method that an instance may replace, as in MMEngine
    (``optim_wrapper.step = counting(optim_wrapper.step)``); see :class:`OptimWrapper`."""

    def __init__(self, function: Callable) -> None:
        self.function = function

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        # not the method's own name: a subclass's override is kept there by plain assignment,
        # and super() must not find it as this method's replacement
        self.key = f"_replaced_{name}"

    def __get__(self, wrapper: Any, owner: type | None = None) -> Any:
        if wrapper is None:
            return self.function
        replacement = wrapper.__dict__.get(self.key, self)
        return MethodType(self.function, wrapper) if replacement is self else replacement

    def __set__(self, wrapper: Any, replacement: Any) -> None:
        wrapper.__dict__[self.key] = replacement
        wrapper.__dict__["_plain_update"] = False

    def __delete__(self, wrapper: Any) -> None:
        if wrapper.__dict__.pop(self.key, self) is self:
            raise AttributeError(
                f"{type(wrapper).__name__}.{self.name} was not replaced on this instance, so "
                "there is nothing to delete"
            )
        if "_clip_fn" in wrapper.__dict__:  # set up by OptimWrapper.__init__ (not by a dict's)
            wrapper._plain_update = wrapper._update_is_plain()


@OPTIM_WRAPPERS.register_module()
class OptimWrapper:
    """Updates the parameters from a loss: ``optim_wrapper.update_params(loss)``.

    ``update_params`` divides the loss for gradient accumulation, runs backward, and on the
    last micro-step of each accumulation window clips the gradients, steps the optimizer and
    zeroes the gradients (``set_to_none=True``)::

        optim_wrapper = dict(
            type='OptimWrapper',
            optimizer=dict(type='SGD', lr=0.01, momentum=0.9),
            accumulative_counts=4,          # one update every 4 iterations
            clip_grad=dict(max_norm=1.0),   # or dict(type='value', clip_value=0.5)
        )

    Accumulating N micro-batches gives the update of one batch N times larger: the loss is
    divided by the length of the window, also for a last, shorter window at the end of the
    run (``max_counts``) and of each epoch (``epoch_length``), which the train loop gives to
    :meth:`initialize_count_status`. On non-final micro-steps, :meth:`optim_context` enters
    ``model.no_sync()`` (DDP) so that gradients are only all-reduced once per window. The
    grad norm (clipping by norm) goes to the MessageHub as ``'train/grad_norm'``, a tensor
    read only when a log line is written; ``message_hub`` is the current one when the wrapper
    is built (None if no MessageHub exists yet and nothing is logged).

    ``scale_loss``, ``backward``, ``should_update``, ``step`` and ``zero_grad`` may be
    overridden in a subclass or replaced on an instance (``wrapper.step = counting_step``,
    as MMEngine's tests do), and ``update_params`` calls them. It skips those five calls (a
    shortcut) only without accumulation or clipping and while none of them is overridden or
    replaced. ``del wrapper.step`` brings the class's method back.
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        accumulative_counts: int = 1,
        clip_grad: dict | None = None,
    ) -> None:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(
                "optim_wrapper.optimizer must be a torch.optim.Optimizer (or a config dict "
                f"built into one), but got {type(optimizer).__name__}"
            )
        accumulative_counts = _check_accumulative_counts(accumulative_counts)
        self.optimizer = optimizer
        self._accumulative_counts = accumulative_counts
        self._inner_count = 0
        self._max_counts = -1  # unknown until initialize_count_status
        self._epoch_length: int | None = None
        self._clip_grad_cfg = clip_grad
        self._clip_fn, self.clip_grad_kwargs = build_grad_clip(clip_grad)
        self._plain_update = self._update_is_plain()
        self._base_lr_source = _find_base_lr_source(optimizer)
        self._clip_params: list[torch.Tensor] = []
        self.message_hub = current_message_hub(create=False)
        if self._clip_fn is not None:
            # every parameter: torch clips the gradients there are, so a parameter frozen
            # now and unfrozen later is clipped from then on
            self._clip_params = [
                param for group in optimizer.param_groups for param in group["params"]
            ]
            if "max_norm" in self.clip_grad_kwargs and self.message_hub is None:
                self.message_hub = current_message_hub()

    def _update_is_plain(self) -> bool:
        """Whether update_params may take its shortcut: an update every iteration, no
        clipping, none of the five steps it stands for overridden or replaced."""
        cls = type(self)
        return (
            self._accumulative_counts == 1
            and self._clip_fn is None
            and all(
                getattr(cls, method.name) is method.function and method.key not in self.__dict__
                for method in _REPLACEABLE
            )
        )

    # ------------------------------------------------------------------ the update

    def update_params(
        self,
        loss: torch.Tensor,
        step_kwargs: dict | None = None,
        zero_kwargs: dict | None = None,
    ) -> None:
        """Backward ``loss`` (divided for accumulation); step and zero_grad when a window ends."""
        if self._plain_update and not (step_kwargs or zero_kwargs):
            # The common case, without five calls: what scale_loss, backward, should_update,
            # step and zero_grad amount to here (this runs every iteration).
            loss.backward()
            self._inner_count += 1
            self.optimizer.step()
            self.optimizer.zero_grad()
            return
        loss = self.scale_loss(loss)
        self.backward(loss)
        if self.should_update():
            self.step(**(step_kwargs or _NO_KWARGS))
            self.zero_grad(**(zero_kwargs or _NO_KWARGS))

    @_Replaceable
    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """``loss.backward(**kwargs)``, counting one micro-step."""
        if kwargs:
            loss.backward(**kwargs)
        else:
            loss.backward()
        self._inner_count += 1

    @_Replaceable
    def step(self, **kwargs: Any) -> None:
        """Clip the gradients (if configured), then ``optimizer.step(**kwargs)``."""
        if self._clip_fn is not None:
            self._clip_grad()
        if kwargs:
            self.optimizer.step(**kwargs)
        else:
            self.optimizer.step()

    @_Replaceable
    def zero_grad(self, **kwargs: Any) -> None:
        """``optimizer.zero_grad(**kwargs)`` (torch's default sets the gradients to None)."""
        if kwargs:
            self.optimizer.zero_grad(**kwargs)
        else:
            self.optimizer.zero_grad()

    def _clip_grad(self) -> None:
        norm = self._clip_fn(self._clip_params)
        if norm is not None:  # clipping by value returns nothing
            if hasattr(norm, "full_tensor"):  # a DTensor under FSDP: the same on every rank
                norm = norm.full_tensor()
            self.message_hub.update_scalar("train/grad_norm", norm)

    def optim_context(self, model: nn.Module) -> AbstractContextManager:
        """The context to run the forward pass in: ``model.no_sync()`` on a micro-step
        whose gradients need no all-reduce yet (DDP with accumulation), else nothing."""
        if self._accumulative_counts > 1 and not self.should_sync() and hasattr(model, "no_sync"):
            return model.no_sync()
        return _NO_CONTEXT

    # ----------------------------------------------------------- gradient accumulation

    def initialize_count_status(
        self,
        model: nn.Module,
        init_counts: int,
        max_counts: int,
        epoch_length: int | None = None,
    ) -> None:
        """Say where training starts and ends (in iterations) so accumulation windows fit.

        ``init_counts`` is the number of iterations already done (non-zero on resume),
        ``max_counts`` the total; with ``epoch_length`` (iterations per epoch) windows
        restart at every epoch boundary, which is logged (INFO) when ``epoch_length`` is not
        a multiple of ``accumulative_counts`` and the run is longer than one epoch: MMEngine's
        windows run across epochs, so its updates differ then. The train loop calls this
        before training.
        """
        for name, value in (("init_counts", init_counts), ("max_counts", max_counts)):
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be an int >= 0, but got {value!r}")
        if epoch_length is not None and (not isinstance(epoch_length, int) or epoch_length < 1):
            raise ValueError(f"epoch_length must be None or an int >= 1, got {epoch_length!r}")
        self._inner_count = init_counts
        self._max_counts = max_counts
        self._epoch_length = epoch_length
        if self._accumulative_counts == 1:
            return
        # only an epoch end inside the run cuts a window that MMEngine's would not: in a run of
        # one epoch, both cut the last window where the run ends
        if (
            epoch_length is not None
            and max_counts > epoch_length
            and epoch_length % self._accumulative_counts
        ):
            _log_epoch_end_windows(self._accumulative_counts, epoch_length)
        if init_counts < max_counts and self._window(init_counts)[0] != init_counts:
            _log(
                f"training resumes at iteration {init_counts}, inside a gradient accumulation "
                f"window of {self._accumulative_counts} iterations: the gradients of the "
                "window's earlier iterations were not saved, so its update uses fewer samples",
                logging.WARNING,
            )
        if any(isinstance(module, nn.modules.batchnorm._BatchNorm) for module in model.modules()):
            _log(
                "the model has BatchNorm layers: with gradient accumulation they see the small "
                "micro-batches, so results can differ slightly from one large batch",
                logging.WARNING,
            )

    def _window(self, count: int) -> tuple[int, int]:
        """``[start, end)`` of the accumulation window of the micro-step with index ``count``."""
        n = self._accumulative_counts
        epoch_start, end_limit = 0, None
        if self._epoch_length is not None:
            epoch_start = count - count % self._epoch_length
            end_limit = epoch_start + self._epoch_length
        if count < self._max_counts:
            end_limit = self._max_counts if end_limit is None else min(end_limit, self._max_counts)
        start = epoch_start + (count - epoch_start) // n * n
        end = start + n
        return start, end if end_limit is None else min(end, end_limit)

    @_Replaceable
    def should_update(self) -> bool:
        """Whether the micro-step just backwarded ends its window (so the optimizer steps)."""
        if self._accumulative_counts == 1:
            return True
        count = self._inner_count
        return count > 0 and self._window(count - 1)[1] == count

    def should_sync(self) -> bool:
        """Whether the coming micro-step ends its window (so DDP must all-reduce)."""
        if self._accumulative_counts == 1:
            return True
        return self._window(self._inner_count)[1] == self._inner_count + 1

    @_Replaceable
    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        """``loss`` divided by the length of the coming micro-step's accumulation window."""
        if self._accumulative_counts == 1:
            return loss
        start, end = self._window(self._inner_count)
        return loss if end - start == 1 else loss / (end - start)

    @property
    def inner_count(self) -> int:
        """The number of micro-steps (iterations) backwarded so far."""
        return self._inner_count

    # ------------------------------------------------------------- optimizer access

    @property
    def param_groups(self) -> list[dict]:
        """The optimizer's param groups (schedulers change ``lr`` and friends here)."""
        return self.optimizer.param_groups

    @property
    def defaults(self) -> dict:
        """The optimizer's default options."""
        return self.optimizer.defaults

    def get_lr(self) -> dict[str, list[float]]:
        """``{'lr': [lr of each param group]}``, after ``'base_lr': [lr]`` when there are
        several param groups (as MMEngine): the scheduled value of ``optimizer.lr``, which
        ``lr`` does not show when the first group has a multiplier (see :meth:`base_lr_source`).
        """
        lrs = [group["lr"] for group in self.optimizer.param_groups]
        if self._base_lr_source is None:
            return {"lr": lrs}
        index, factor = self._base_lr_source
        return {"base_lr": [lrs[index] * factor], "lr": lrs}

    def base_lr_source(self) -> tuple[int, float] | None:
        """Where ``'base_lr'`` comes from: ``(i, factor)``, base_lr being
        ``param_groups[i]['lr'] * factor``; None with one param group (no base_lr then).

        ``i`` is the first group that started at ``optimizer.lr`` (no lr multiplier) and
        ``factor`` is 1.0: schedulers move it as MMEngine's extra base group, so the values
        are MMEngine's. When every group has a multiplier, ``i`` is the first group and
        ``factor`` undoes its multiplier: exact for schedules that scale the lr (step,
        multi-step, linear, exponential, ``eta_min_ratio`` cosine), close for those that
        move it towards a fixed ``eta_min``.
        """
        return self._base_lr_source

    def get_momentum(self) -> dict[str, list[float]]:
        """``{'momentum': [...]}``: each group's momentum, or ``betas[0]`` (Adam), else 0."""
        momentum = []
        for group in self.optimizer.param_groups:
            if "momentum" in group:
                momentum.append(group["momentum"])
            elif "betas" in group:
                momentum.append(group["betas"][0])
            else:
                momentum.append(0)
        return {"momentum": momentum}

    def state_dict(self) -> dict:
        """The optimizer's state dict (what a checkpoint saves as ``'optimizer'``)."""
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a state dict made by :meth:`state_dict`, or by MMEngine's OptimWrapper.

        MMEngine's ``base_param_settings`` is left out (``base_lr`` is read from the param
        groups here). With ``paramwise_cfg`` MMEngine makes one param group per parameter
        (``named_parameters`` order) where runnerx shares a group between parameters with
        equal settings; such a state dict is regrouped: each parameter's state moves to its
        place here, after checking that its saved settings (``lr``, ``weight_decay``, ...,
        compared at their values before scheduling) are those of the group it joins. Without
        the model, parameters are told apart by their settings and their order in each group;
        the Runner's resume matches them by name first (see
        :func:`~runnerx.optim.mmengine_state.regroup_mmengine_state`).
        """
        state = {key: value for key, value in state_dict.items() if key != "base_param_settings"}
        self.optimizer.load_state_dict(regroup_mmengine_state(state, self.optimizer.param_groups))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(accumulative_counts={self._accumulative_counts}, "
            f"clip_grad={self._clip_grad_cfg!r})\noptimizer: {self.optimizer!r}"
        )


_REPLACEABLE = tuple(
    method for method in vars(OptimWrapper).values() if isinstance(method, _Replaceable)
)


def _find_base_lr_source(optimizer: torch.optim.Optimizer) -> tuple[int, float] | None:
    """See :meth:`OptimWrapper.base_lr_source`; read once, before any scheduler runs."""
    groups = optimizer.param_groups
    base = optimizer.defaults.get("lr")
    if len(groups) < 2 or isinstance(base, bool) or not isinstance(base, (int, float)):
        return None
    starts = [float(group.get("initial_lr", group["lr"])) for group in groups]
    if base in starts:
        return starts.index(base), 1.0
    return next(((i, base / start) for i, start in enumerate(starts) if start), None)
