"""Checks of the Runner's arguments that concern several of them at once, and the arguments
``Runner.from_cfg`` reads from a config."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

#: the arguments that belong together: all given (that stage runs) or none
_STAGES = {
    "train": ("train_dataloader", "train_cfg", "optim_wrapper"),
    "val": ("val_dataloader", "val_cfg", "val_evaluator"),
    "test": ("test_dataloader", "test_cfg", "test_evaluator"),
}
_STAGE_NAMES = {"train": "training", "val": "validation", "test": "testing"}
_STAGE_VERBS = {"train": "train", "val": "validate", "test": "test"}


def stage_off_hint(stage: str) -> str:
    """How to turn ``stage`` ('train', 'val' or 'test') off, for error messages."""
    names = _STAGES[stage]
    return (
        f"to turn {_STAGE_NAMES[stage]} off, leave out {', '.join(names[:-1])} and {names[-1]} "
        "(or set all three to None)"
    )


def check_run_parts(**parts: Any) -> None:
    """Refuse a stage given in part (``train_dataloader`` without ``train_cfg``, ...) and
    ``param_scheduler`` without ``optim_wrapper``, as MMEngine does (ValueError)."""
    for stage, names in _STAGES.items():
        given = [name for name in names if parts.get(name) is not None]
        if given and len(given) != len(names):
            missing = [name for name in names if name not in given]
            defaults = ""
            if stage != "train" and f"{stage}_cfg" in missing:
                defaults = f" ({stage}_cfg=dict() for the defaults)"
            raise ValueError(
                f"{stage}: {', '.join(given)} given but {', '.join(missing)} missing; set all "
                f"of {', '.join(names)} for {_STAGE_NAMES[stage]}{defaults}, or "
                f"{stage_off_hint(stage)}"
            )
    param_scheduler = parts.get("param_scheduler")
    if param_scheduler is None:
        return
    if parts.get("optim_wrapper") is None:
        raise ValueError(
            "param_scheduler is set but optim_wrapper is not: schedulers drive an optimizer; "
            "set optim_wrapper, train_dataloader and train_cfg to train, or remove "
            "param_scheduler"
        )
    _check_param_scheduler(param_scheduler)


def _check_param_scheduler(param_scheduler: Any) -> None:
    """Refuse what is neither a scheduler (config dict or built runnerx scheduler), a list of
    them, nor a dict of those by optimizer name; checked when the Runner is built, as MMEngine
    does."""
    from runnerx.optim.scheduler.build import check_scheduler_entry

    keyed = isinstance(param_scheduler, Mapping) and "type" not in param_scheduler
    for name, value in param_scheduler.items() if keyed else [("", param_scheduler)]:
        where = f"param_scheduler.{name}" if keyed else "param_scheduler"
        several = isinstance(value, (list, tuple))
        for index, entry in enumerate(value if several else [value]):
            check_scheduler_entry(entry, f"{where}[{index}]" if several else where)


def check_model_step(model: Any, unwrapped: Any, mode: str) -> None:
    """Refuse, before a stage runs, a model without the step that ``mode`` ('train', 'val'
    or 'test') calls: ``model`` (the Runner's, maybe in a wrapper whose step calls the
    wrapped one's) and ``unwrapped`` (the user's) must both have it."""
    step = f"{mode}_step"
    for tested in (model, unwrapped):
        if callable(getattr(tested, step, None)):
            continue
        off = "" if mode == "train" else f", or {stage_off_hint(mode)}"
        raise TypeError(
            f"{mode}_cfg is set but the model, {type(tested).__name__}, has no {step}(); "
            f"to {_STAGE_VERBS[mode]} a model it must implement {step}() (subclass "
            f"runnerx.model.BaseModel, which has it and calls your forward(..., mode)){off}"
        )


def init_parameters(cls: type) -> list[inspect.Parameter]:
    """The named arguments of ``cls.__init__``, and of its bases' while it passes
    ``**kwargs`` on (a subclass's ``__init__(self, *args, extra=1, **kwargs)``)."""
    found: dict[str, inspect.Parameter] = {}
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        parameters = list(inspect.signature(klass.__init__).parameters.values())[1:]
        for parameter in parameters:
            if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                found.setdefault(parameter.name, parameter)
        if all(parameter.kind is not parameter.VAR_KEYWORD for parameter in parameters):
            break
    return list(found.values())
