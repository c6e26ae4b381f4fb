"""The base of every parameter scheduler: one hyper-parameter of every param group, over steps.

A scheduler changes ``param_groups[i][param_name]`` (``lr``, ``momentum``, ``weight_decay``,
...) each time ``step()`` is called while its step count is in ``[begin, end)``. The change is
*chained*, as in MMEngine and ``torch.optim.lr_scheduler``: each step scales or moves the value
the param group holds now, so several schedulers on one parameter compose (a warm-up that
multiplies a step decay, or a warm-up followed by a cosine). The value each group started from
is kept in the group as ``initial_<param_name>`` by the first scheduler built on it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from runnerx.logging.logger import print_log
from runnerx.utils import lazy_attributes
from runnerx.utils.errors import ValueAssertionError

#: ``end`` of a scheduler that never stops (MMEngine's value, so state dicts agree).
INF = int(1e9)


class ParamGroupKeyError(KeyError):
    """A param group lacks the key a scheduler needs; ``str(err)`` is the plain message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def named_optim_wrappers(optim_wrapper: Any) -> dict[str, Any] | None:
    """The wrappers of an OptimWrapperDict (or any mapping of them) by name; None for one."""
    if isinstance(optim_wrapper, Mapping):
        return dict(optim_wrapper)
    if callable(getattr(optim_wrapper, "items", None)) and callable(
        getattr(optim_wrapper, "keys", None)
    ):
        return dict(optim_wrapper.items())
    return None


def unwrap_optimizer(optimizer: Any) -> Any:
    """The ``torch.optim.Optimizer`` behind ``optimizer``: itself or an OptimWrapper's
    ``.optimizer``."""
    several = named_optim_wrappers(optimizer)
    if several is not None:
        raise TypeError(
            f"a scheduler drives one optimizer, but got {type(optimizer).__name__} holding "
            f"{', '.join(map(repr, several))}; build one list of schedulers per optimizer "
            "(build_param_schedulers does that for an OptimWrapperDict)"
        )
    inner = getattr(optimizer, "optimizer", optimizer)
    if not isinstance(getattr(inner, "param_groups", None), list):
        raise TypeError(
            "optimizer must be a torch.optim.Optimizer or an OptimWrapper (an object with "
            f".optimizer), but got {type(optimizer).__name__}"
        )
    return inner


def per_group(name: str, value: Any, groups: list[dict]) -> list:
    """``value`` for each param group: a list or tuple as given (one entry per group), a scalar
    repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(groups):
            raise ValueError(
                f"{name} has {len(value)} values but the optimizer has {len(groups)} param "
                "groups; give one value per group, or a single value for all"
            )
        return list(value)
    return [value] * len(groups)


def _scaled_by(value: Any, factor: int) -> Any:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [item * factor for item in value]
    return value * factor


class _ParamScheduler:
    """Base class: changes ``param_name`` of every param group at steps ``begin <= s < end``.

    Subclasses give the shape with ``_value(group, base)`` (the next value of one group, from
    its current value ``group[param_name]`` and its initial value ``base``) or, as in MMEngine,
    override ``_get_value()`` to return the next value of every group. ``last_step`` counts the
    steps taken inside the window (0 on the first one); ``step()`` is called once on
    construction, so a scheduler with ``begin=0`` sets its first value right away.

    ``by_epoch`` only says who steps it: the ParamSchedulerHook steps epoch-based schedulers
    after every training epoch and the others after every training iteration.

    Arguments counted in epochs are listed in ``epoch_counted``; ``build_iter_from_epoch``
    scales them (and ``begin``/``end``) by the epoch length.
    """

    #: constructor arguments counted in epochs, scaled by ``build_iter_from_epoch``
    epoch_counted: tuple[str, ...] = ()

    def __init__(
        self,
        optimizer: Any,
        param_name: str,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.optimizer = unwrap_optimizer(optimizer)
        self.param_name = param_name
        if not end > begin:
            raise ValueError(f"end must be larger than begin, but got begin={begin}, end={end}")
        if not isinstance(last_step, int) or last_step < -1:
            raise ValueAssertionError(f"last_step must be an int >= -1, but got {last_step!r}")
        self.begin = begin
        self.end = end
        self.by_epoch = by_epoch
        self.verbose = verbose
        groups = self.optimizer.param_groups
        initial = f"initial_{param_name}"
        for index, group in enumerate(groups):
            if last_step == -1:
                if param_name not in group:
                    raise ParamGroupKeyError(
                        f"param_groups[{index}] of {type(self.optimizer).__name__} has no "
                        f"{param_name!r} to schedule (its keys: {', '.join(sorted(group))})"
                    )
                group.setdefault(initial, group[param_name])
            elif initial not in group:
                raise ParamGroupKeyError(
                    f"last_step={last_step} resumes a schedule, but param_groups[{index}] has no "
                    f"{initial!r}; load the optimizer's state dict first"
                )
        self.base_values = [group[initial] for group in groups]
        self.last_step = last_step
        self._global_step = -1
        self._last_value: list = []
        self.step()

    @classmethod
    def build_iter_from_epoch(
        cls,
        *args: Any,
        begin: float = 0,
        end: float = INF,
        by_epoch: bool = True,
        epoch_length: int | None = None,
        **kwargs: Any,
    ) -> _ParamScheduler:
        """Build an iteration-based scheduler from an epoch-based configuration.

        ``begin``, ``end`` and the arguments in ``epoch_counted`` (``step_size``,
        ``milestones``, ``T_max``, ``periods``, ``total_steps``) are multiplied by
        ``epoch_length`` (iterations per epoch); the result has ``by_epoch=False``. A config
        asks for this with ``convert_to_iter_based=True``::

            dict(type='CosineAnnealingLR', T_max=10, by_epoch=True, convert_to_iter_based=True)
        """
        if not by_epoch:
            raise ValueAssertionError(
                f"{cls.__name__}.build_iter_from_epoch converts an epoch-based schedule, but got "
                "by_epoch=False; drop convert_to_iter_based or set by_epoch=True"
            )
        if isinstance(epoch_length, bool) or not isinstance(epoch_length, int) or epoch_length < 1:
            raise ValueAssertionError(
                f"epoch_length must be a positive int (iterations per epoch), but got "
                f"{epoch_length!r}"
            )
        for name in cls.epoch_counted:
            if kwargs.get(name) is not None:
                kwargs[name] = _scaled_by(kwargs[name], epoch_length)
        begin = int(begin * epoch_length)
        end = end if end == INF else int(end * epoch_length)
        return cls(*args, begin=begin, end=end, by_epoch=False, **kwargs)

    def step(self) -> None:
        """Advance one step; inside ``[begin, end)`` set the next value in every param group."""
        self._global_step += 1
        groups = self.optimizer.param_groups
        name = self.param_name
        if self.begin <= self._global_step < self.end:
            self.last_step += 1
            for index, (group, value) in enumerate(zip(groups, self._get_value())):
                group[name] = value
                self.print_value(self.verbose, index, value)
        self._last_value = [group[name] for group in groups]

    def print_value(self, is_verbose: bool, group: int, value: float) -> None:
        """Log (INFO) the value just set in param group ``group`` when ``is_verbose``
        (``verbose=True``), through the current logger: the running Runner's, else printed.
        ``step()`` calls it for every group it changes, as MMEngine's does."""
        if is_verbose:
            print_log(f"Adjusting parameter value of group {group} to {value:.4e}.", "current")

    def _get_value(self) -> list:
        """The next value of every param group (at step ``last_step`` of the window)."""
        return [
            self._value(group, base)
            for group, base in zip(self.optimizer.param_groups, self.base_values)
        ]

    def _value(self, group: dict, base: float) -> float:
        """The next value of one param group."""
        raise NotImplementedError(f"{type(self).__name__} must implement _value or _get_value")

    def get_last_value(self) -> list:
        """The value of every param group after the last ``step()``."""
        return self._last_value

    def state_dict(self) -> dict:
        """Everything needed to continue this schedule exactly (all but the optimizer).

        The values themselves live in the optimizer's param groups: save and load its state
        dict too. Only plain Python values, so ``torch.load(weights_only=True)`` reads it.
        """
        return {
            key: copy.deepcopy(value) for key, value in vars(self).items() if key != "optimizer"
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Continue from a ``state_dict()`` (also reads the state dicts MMEngine writes).

        An MMEngine run with ``paramwise_cfg`` saved one start value per parameter
        (``base_values``), where runnerx shares param groups: the start values are then read
        from the groups, which the optimizer's state, loaded first, gave them."""
        for key, value in state_dict.items():
            if key != "optimizer":
                setattr(self, key, copy.deepcopy(value))
        groups = self.optimizer.param_groups
        initial = f"initial_{self.param_name}"
        if len(self.base_values) != len(groups) and all(initial in group for group in groups):
            self.base_values = [group[initial] for group in groups]


#: MMEngine's ``mmengine.optim.scheduler.param_scheduler`` path also holds the generic
#: schedulers, which live in their own modules here: loaded from the package on first use
__getattr__ = lazy_attributes(
    __name__,
    dict.fromkeys(
        (
            "ConstantParamScheduler",
            "CosineAnnealingParamScheduler",
            "CosineRestartParamScheduler",
            "ExponentialParamScheduler",
            "LinearParamScheduler",
            "MultiStepParamScheduler",
            "OneCycleParamScheduler",
            "PolyParamScheduler",
            "ReduceOnPlateauParamScheduler",
            "StepParamScheduler",
        ),
        "runnerx.optim.scheduler",
    ),
)
