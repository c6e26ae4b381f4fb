"""Finding the sub-modules a config names by class (``modules=['TransformerBlock']``)."""

from __future__ import annotations

from typing import Any

from torch import nn

from runnerx.suggest import did_you_mean


def find_modules(model: nn.Module, names: Any, where: str) -> list[nn.Module]:
    """The sub-modules of ``model`` (itself excluded), in model order, whose class is named in
    ``names`` (a class name, a class, or a list of them); a subclass matches its base.

    Finding none is an error that lists the model's module classes, so a typo shows.
    """
    wanted = [names] if isinstance(names, (str, type)) else list(names or ())
    if not wanted or not all(isinstance(name, (str, type)) for name in wanted):
        raise TypeError(
            f"{where} must be a class name or a list of them, e.g. ['TransformerBlock'], "
            f"but got {names!r}"
        )
    found = [
        module
        for module in model.modules()
        if module is not model and any(_matches(module, name) for name in wanted)
    ]
    if not found:
        classes = sorted({type(module).__name__ for module in model.modules()})
        first_name = next((name for name in wanted if isinstance(name, str)), "")
        raise ValueError(
            f"{where}={names!r} matches no sub-module of {type(model).__name__} (its module "
            f"classes: {', '.join(classes)}){did_you_mean(first_name, classes)}"
        )
    return found


def _matches(module: nn.Module, name: str | type) -> bool:
    if isinstance(name, type):
        return isinstance(module, name)
    return any(cls.__name__ == name for cls in type(module).__mro__)
