"""Which modules an FSDP1 ``auto_wrap_policy`` or a ``check_fn`` picks, as runnerx names them.

MMEngine's FSDPStrategy passes FSDP1 a policy function, ``policy(module, recurse,
nonwrapped_numel) -> bool`` (``size_based_auto_wrap_policy``, ``transformer_auto_wrap_policy``,
...), and torch's activation checkpointing a ``check_fn(module) -> bool``. runnerx names
blocks by class (``wrap_modules=[...]``, ``activation_checkpointing=dict(modules=[...])``):
:func:`fsdp1_units` runs a policy over a model as FSDP1 does, and :func:`modules_as_classes`
turns the modules picked into their classes when those are exactly all modules of the classes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from torch import nn

from runnerx.registry import FUNCTIONS


def fsdp1_units(model: nn.Module, policy: Callable[..., bool]) -> list[nn.Module]:
    """The sub-modules FSDP1's auto wrapping with the function ``policy`` wraps (the root, which
    it always wraps, left out), children before their parents.

    As FSDP1 does: a module whose parameters the policy allows to recurse into has its children
    visited first; it is then wrapped itself if the policy accepts the parameters its wrapped
    children did not take."""
    units: list[nn.Module] = []

    def visit(module: nn.Module) -> int:
        """Visit ``module``; return how many of its parameters' elements units took."""
        numel = sum(param.numel() for param in module.parameters())
        if not policy(module=module, recurse=True, nonwrapped_numel=numel):
            return 0
        wrapped = sum(visit(child) for child in module.children())
        if module is not model and policy(
            module=module, recurse=False, nonwrapped_numel=numel - wrapped
        ):
            units.append(module)
            return numel
        return wrapped

    visit(model)
    return units


def modules_as_classes(
    model: nn.Module, picked: list[nn.Module], where: str, instead: str
) -> list[type]:
    """The classes of ``picked``, which must be all sub-modules of those classes (runnerx names
    blocks by class); ``instead`` is the runnerx setting to point to when they are not."""
    classes = tuple(dict.fromkeys(type(module) for module in picked))
    chosen = {id(module) for module in picked}
    for name, module in model.named_modules():
        if module is not model and isinstance(module, classes) and id(module) not in chosen:
            raise ValueError(
                f"{where} picks some {type(module).__name__} modules but not {name!r}: runnerx "
                f"names blocks by class and cannot take part of a class; name the classes in "
                f"{instead} instead"
            )
    return list(classes)


def resolve_function(spec: Any, where: str) -> Callable:
    """The function ``spec`` names as MMEngine reads it: a FUNCTIONS name or dotted path,
    ``dict(type=name_or_function, **arguments)`` (the arguments bound) or a callable."""
    arguments: dict[str, Any] = {}
    function = spec
    if isinstance(spec, Mapping):
        arguments = dict(spec)
        function = arguments.pop("type", None)
    if isinstance(function, str):
        function = FUNCTIONS.get(function)
    if not callable(function):
        raise ValueError(
            f"{where}={spec!r} names no function: expected a FUNCTIONS name, a dotted path "
            "such as 'torch.distributed.fsdp.wrap.size_based_auto_wrap_policy', "
            "dict(type=..., **arguments) or a callable"
        )
    return functools.partial(function, **arguments) if arguments else function
