"""get_model_complexity_info: flops, activations and parameters of a model, with reports."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from runnerx.utils import is_tuple_of

from .analyzers import ActivationAnalyzer, FlopAnalyzer, analyze_together
from .params import parameter_count
from .report import complexity_arch, complexity_table, format_size


def _dummy_inputs(model: nn.Module, input_shape: Any) -> tuple[torch.Tensor, ...]:
    """Random batch-of-one inputs on ``model``'s device: one per shape."""
    if is_tuple_of(input_shape, int):
        shapes = (input_shape,)
    elif is_tuple_of(input_shape, tuple) and all(is_tuple_of(s, int) for s in input_shape):
        shapes = input_shape
    else:
        raise ValueError(
            "input_shape must be a tuple of ints (one input, e.g. (3, 224, 224)) or a tuple "
            f"of such tuples (one per forward argument), got {input_shape!r}"
        )
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    return tuple(torch.randn(1, *shape, device=device) for shape in shapes)


def get_model_complexity_info(
    model: nn.Module,
    input_shape: tuple[int, ...] | tuple[tuple[int, ...], ...] | None = None,
    inputs: torch.Tensor | tuple[Any, ...] | None = None,
    show_table: bool = True,
    show_arch: bool = True,
) -> dict[str, Any]:
    """Flops, activations and parameters of one forward of ``model``, as MMEngine's
    function of the same name gives them.

    Give ``inputs`` (a tensor, or a tuple of forward arguments) or ``input_shape`` (shapes
    without the batch dimension: random float inputs of batch size 1 are made). Returns
    ``dict(flops, flops_str, activations, activations_str, params, params_str, out_table,
    out_arch)``; the ``*_str`` values are short (``'4.2G'``), ``out_table`` the per-module
    table and ``out_arch`` the model's repr with statistics (``''`` when not asked for)::

        info = get_model_complexity_info(model, input_shape=(3, 224, 224))
        print(info['flops_str'], info['params_str'], info['out_table'])

    The model runs once, eagerly, under a dispatch mode (see :mod:`runnerx.analysis`).
    """
    if (input_shape is None) == (inputs is None):
        raise ValueError("get_model_complexity_info needs exactly one of input_shape and inputs")
    if inputs is None:
        inputs = _dummy_inputs(model, input_shape)
    flop_analyzer = FlopAnalyzer(model, inputs)
    # the flop analyzer's warnings name every op that costs something and is not counted
    activation_analyzer = ActivationAnalyzer(model, inputs).unsupported_ops_warnings(False)
    activation_analyzer.uncalled_modules_warnings(False)
    analyze_together(flop_analyzer, activation_analyzer)
    params = parameter_count(model)
    flops, activations = flop_analyzer.total(), activation_analyzer.total()
    table = arch = ""
    if show_table:
        columns = {
            "#parameters or shape": params,
            "#flops": flop_analyzer.by_module(),
            "#activations": activation_analyzer.by_module(),
        }
        table = "\n" + complexity_table(model, columns, flop_analyzer.uncalled_modules())
    if show_arch:
        columns = {
            "#params": params,
            "#flops": flop_analyzer.by_module(),
            "#acts": activation_analyzer.by_module(),
        }
        uncalled = {
            "#flops": flop_analyzer.uncalled_modules(),
            "#acts": activation_analyzer.uncalled_modules(),
        }
        arch = "\n" + complexity_arch(model, columns, uncalled)
    return {
        "flops": flops,
        "flops_str": format_size(flops),
        "activations": activations,
        "activations_str": format_size(activations),
        "params": params[""],
        "params_str": format_size(params[""]),
        "out_table": table,
        "out_arch": arch,
    }
