"""Text reports of model statistics: short numbers (``'1.23M'``), plain ASCII tables, the
per-module complexity table and the model's ``repr`` annotated with its statistics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from torch import nn

#: (threshold, divisor, suffix) from the largest; a number above the threshold gets the suffix
_UNITS = ((1e14, 1e15, "P"), (1e11, 1e12, "T"), (1e8, 1e9, "G"), (1e5, 1e6, "M"), (1e2, 1e3, "K"))


def format_size(x: float, sig_figs: int = 3, hide_zero: bool = False) -> str:
    """``x`` with a K/M/G/T/P suffix and at most ``sig_figs`` decimals, trailing zeros
    dropped (``1234567 -> '1.235M'``); ``''`` for 0 when ``hide_zero``."""
    if hide_zero and x == 0:
        return ""
    for threshold, divisor, suffix in _UNITS:
        if abs(x) > threshold:
            return f"{x / divisor:.{sig_figs}f}".rstrip("0").rstrip(".") + suffix
    return str(x)


def ascii_table(headers: Sequence[str], rows: Sequence[Sequence[str]], title: str = "") -> str:
    """A left-aligned table drawn with ``+ - |`` (rows keep their leading spaces)."""
    widths = [max(len(str(r[i])) for r in (headers, *rows)) for i in range(len(headers))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {c!s:<{w}} " for c, w in zip(cells, widths)) + "|"

    lines = [rule, line(headers), rule, *(line(row) for row in rows), rule]
    if title:
        lines.insert(0, title.center(len(rule)).rstrip())
    return "\n".join(lines)


def _parent(name: str) -> str:
    return name.rpartition(".")[0]


def _prune_zero_rows(stats: dict[str, dict[str, int]], keep: set[str]) -> dict[str, dict[str, int]]:
    """Rows with a non-zero statistic, in ``keep``, or with a kept descendant."""
    kept = {name for name, values in stats.items() if name in keep or any(values.values())}
    for name in list(kept):
        while name:
            name = _parent(name)
            kept.add(name)
    return {name: values for name, values in stats.items() if name in kept}


def _combined(first: dict[str, str], second: dict[str, str]) -> dict[str, str] | None:
    """One row for a module and its only child, if no column disagrees."""
    if first.keys() != second.keys():
        return None
    if any(first[k] and second[k] and first[k] != second[k] for k in first):
        return None
    return {k: first[k] or second[k] for k in first}


def stats_table(
    stats: dict[str, dict[str, str]], columns: Sequence[str], max_depth: int = 3
) -> str:
    """The rows of ``stats`` (module or parameter name -> column -> text) as an indented
    table to ``max_depth`` levels; a module with one child and matching statistics shares
    its child's row (``backbone.stem`` rather than two rows)."""
    children: dict[str, list[str]] = {name: [] for name in stats}
    for name in stats:
        if name:
            children.setdefault(_parent(name), []).append(name)

    def fast_forward(name: str) -> tuple[str, dict[str, str]]:
        values = stats[name]
        while len(children.get(name, ())) == 1:
            merged = _combined(values, stats[children[name][0]])
            if merged is None:
                break
            name, values = children[name][0], merged
        return name, values

    rows: list[list[str]] = []

    def add(name: str, values: dict[str, str], depth: int, shown: str) -> None:
        indent = " " * depth
        rows.append([indent + shown] + [indent + values[c] if c in values else "" for c in columns])

    root, values = fast_forward("")
    add(root, values, 0, root or "model")
    root_prefix = f"{root}." if root else ""

    def fill(name: str, depth: int) -> None:
        if depth > max_depth:
            return
        for child in children.get(name, ()):
            child, values = fast_forward(child)
            shown = child[len(root_prefix) :] if child.startswith(root_prefix) else child
            add(child, values, depth, shown)
            fill(child, depth + 1)

    fill(root, 1)
    return ascii_table(["module", *columns], rows)


def complexity_table(
    model: nn.Module,
    columns: Mapping[str, Mapping[str, int]],
    uncalled: set[str],
    max_depth: int = 3,
    show_param_shapes: bool = True,
) -> str:
    """The table of ``columns`` (``'#parameters or shape'`` first, by parameter and module
    name, then e.g. ``'#flops'`` by module): rows with only zeros are left out, uncalled
    modules show blanks, parameters show their shapes."""
    order: list[str] = []  # modules as the model lists them, each followed by its parameters
    for name, module in model.named_modules():
        order.append(name)
        order += [f"{name}.{p}" if name else p for p, _ in module.named_parameters(recurse=False)]
    rows: dict[str, dict[str, int]] = {name: {} for name in order}
    for column, counts in columns.items():
        for name, count in counts.items():
            rows.setdefault(name, {})[column] = count
    rows = _prune_zero_rows({name: values for name, values in rows.items() if values}, {""})
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    params_column = next(iter(columns))
    text: dict[str, dict[str, str]] = {}
    for name, values in rows.items():
        if name in shapes and not show_param_shapes:
            continue
        text[name] = {column: format_size(count) for column, count in values.items()}
        if name in shapes:
            text[name][params_column] = str(shapes[name])
        if name in uncalled:
            text[name].update({column: "" for column in list(columns)[1:]})
    return stats_table(text, list(columns), max_depth)


def annotated_repr(model: nn.Module, stats: Mapping[str, Mapping[str, str]]) -> str:
    """``repr(model)`` with each module's statistics (``'#params: 1.2K, #flops: 3M'``) as an
    extra line inside its parentheses."""

    def render(module: nn.Module, name: str) -> str:
        extra = module.extra_repr().split("\n") if module.extra_repr() else []
        if stats.get(name):
            extra.append(", ".join(f"{k}: {v}" for k, v in stats[name].items()))
        child_lines = []
        for key, child in module._modules.items():
            if child is not None:
                child_text = render(child, f"{name}.{key}" if name else key)
                child_lines.append(f"({key}): " + child_text.replace("\n", "\n  "))
        if len(extra) == 1 and not child_lines:
            return f"{module._get_name()}({extra[0]})"
        body = "".join(f"\n  {line}" for line in extra + child_lines)
        return f"{module._get_name()}({body}\n)" if body else f"{module._get_name()}()"

    return render(model, "")


def complexity_arch(
    model: nn.Module, columns: Mapping[str, Mapping[str, int]], uncalled: dict[str, set[str]]
) -> str:
    """:func:`annotated_repr` of ``columns`` (``'#params'``, ``'#flops'``...): modules with
    only zeros show nothing, ``uncalled[column]`` modules show N/A in that column."""
    rows = {
        name: {column: counts.get(name, 0) for column, counts in columns.items()}
        for name, _ in model.named_modules()
    }
    all_uncalled = set().union(*uncalled.values())
    rows = {
        name: values
        for name, values in rows.items()
        if not name or name in all_uncalled or any(values.values())
    }
    text = {
        name: {column: format_size(count, sig_figs=2) for column, count in values.items()}
        for name, values in rows.items()
    }
    for column, modules in uncalled.items():
        for name in modules & text.keys():
            text[name][column] = "N/A"
    prefix = ""
    if all_uncalled:
        prefix = (
            "N/A: the module never ran during the forward; its work, if any, counts for the "
            "module that called it.\n"
        )
    return prefix + annotated_repr(model, text)
