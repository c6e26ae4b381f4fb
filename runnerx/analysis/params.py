"""Parameter counts of a model and each of its submodules and parameters."""

from __future__ import annotations

from collections import defaultdict

from torch import nn

from .report import ascii_table


def parameter_count(model: nn.Module) -> defaultdict[str, int]:
    """Elements per parameter name and per module name (every prefix of a parameter's
    name); ``''`` is the whole model. A parameter shared under two names counts once."""
    count: defaultdict[str, int] = defaultdict(int)
    for name, param in model.named_parameters():
        parts = name.split(".")
        for depth in range(len(parts) + 1):
            count[".".join(parts[:depth])] += param.numel()
    return count


def _short(x: int) -> str:
    for threshold, divisor, suffix in ((1e8, 1e9, "G"), (1e5, 1e6, "M"), (1e2, 1e3, "K")):
        if x > threshold:
            return f"{x / divisor:.1f}{suffix}"
    return str(x)


def parameter_count_table(model: nn.Module, max_depth: int = 3) -> str:
    """A table of parameter counts by module (and shapes by parameter), ``max_depth``
    levels deep::

        print(parameter_count_table(model, max_depth=2))
    """
    count = parameter_count(model)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    rows = [["model", _short(count[""])]]
    for name, size in count.items():
        depth = name.count(".")
        if name and depth < max_depth:
            indent = " " * (depth + 1)
            rows.append([indent + name, indent + str(shapes.get(name, _short(size)))])
    title = f"parameter count of {type(model).__name__}"
    return ascii_table(["name", "#elements or shape"], rows, title=title)
