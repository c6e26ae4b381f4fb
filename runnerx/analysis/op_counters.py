"""Counting rules: what each aten op costs in flops and activations, and under which name.

The analysers watch the aten ops that reach the dispatcher (below autograd), where composite
torch functions arrive decomposed: ``F.linear`` as ``addmm`` or ``mm``, ``a @ b`` as ``bmm``,
``nn.AdaptiveAvgPool2d(1)`` as ``mean``. Each op gets a *key* in the TorchScript names that
MMEngine's handles and ignore lists use (``'aten::linear'``, ``'aten::_convolution'``,
``'aten::batch_norm'``...), so that ``set_op_handle('aten::batch_norm', None)`` means the same;
the ops emitted by ``F.linear`` and a few modules' forwards are gathered back under the one op
MMEngine's trace sees (see ``op_key``).

A handle is ``handle(inputs, outputs) -> number | Counter``: ``inputs`` are the aten op's
arguments in its schema's order (keyword arguments filled in, tensors as tensors), ``outputs``
its results as a list. Batch-norm variants (``native_batch_norm``, ``cudnn_batch_norm``,
``_native_batch_norm_legit_no_training``...) all arrive in ``native_batch_norm``'s layout
``(input, weight, bias, running_mean, running_var, training, momentum, eps)``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

from torch import Tensor, nn
from torch.nn import functional as F

#: ``handle(inputs, outputs)`` -> a count, or a Counter of counts by operator name
Handle = Callable[[list[Any], list[Any]], "int | float | Counter[str]"]

_BATCH_NORM_OPS = frozenset(
    {
        "native_batch_norm",
        "cudnn_batch_norm",
        "miopen_batch_norm",
        "_native_batch_norm_legit",
        "_native_batch_norm_legit_no_training",
        "_batch_norm_with_update",
        "_batch_norm_no_update",
    }
)

#: dispatcher op name -> the TorchScript op MMEngine's tables name it by
_SCRIPT_NAMES = {
    **dict.fromkeys(_BATCH_NORM_OPS, "batch_norm"),
    "convolution": "_convolution",
    "native_layer_norm": "layer_norm",
    "native_group_norm": "group_norm",
    "_adaptive_avg_pool2d": "adaptive_avg_pool2d",
    "_adaptive_avg_pool3d": "adaptive_avg_pool3d",
    "grid_sampler_2d": "grid_sampler",
    "_softmax": "softmax",
    "_log_softmax": "log_softmax",
    "max_pool2d_with_indices": "max_pool2d",
    "max_pool3d_with_indices": "max_pool3d",
    "native_dropout": "dropout",
    "_unsafe_view": "view",
    "_scaled_dot_product_flash_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "_scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_cudnn_attention": "scaled_dot_product_attention",
}

#: calls MMEngine's trace records as one op, wherever they are called from: torch functions
#: (the tracker watches for them at the torch-function level: ``nn.Linear`` and
#: ``nn.MultiheadAttention`` call ``F.linear``) and modules' forwards. For each, the op's key
#: and the aten ops emitted directly by the call that carry its cost; the call's other ops
#: (views, a bias add after ``mm``, dropout's mask) are part of that one op, not reported
FUNCTION_OPS: dict[Callable, tuple[str, frozenset[str]]] = {
    F.linear: ("aten::linear", frozenset({"addmm", "mm", "mv"})),
}
_MODULE_OPS: dict[Callable, tuple[str, frozenset[str]]] = {
    nn.InstanceNorm1d.forward: ("aten::instance_norm", _BATCH_NORM_OPS),
    nn.AdaptiveAvgPool1d.forward: (
        "aten::adaptive_avg_pool1d",
        frozenset({"mean", "_adaptive_avg_pool2d"}),
    ),
    nn.AdaptiveAvgPool2d.forward: (
        "aten::adaptive_avg_pool2d",
        frozenset({"mean", "_adaptive_avg_pool2d"}),
    ),
    nn.AdaptiveAvgPool3d.forward: (
        "aten::adaptive_avg_pool3d",
        frozenset({"mean", "_adaptive_avg_pool3d"}),
    ),
    nn.Dropout.forward: ("aten::dropout", frozenset()),
}

#: ops that cost no flops (shapes, copies, creation, comparisons, integer maths, relu, a
#: tensor's ``.item()``): skipped silently rather than reported as unsupported
IGNORED_OPS = frozenset(
    "aten::" + name
    for name in """
    Int ScalarImplicit _local_scalar_dense __and__ bitwise_and bitwise_not alias arange
    as_strided bernoulli_ cat chunk clamp clamp_ clone constant_pad_nd contiguous copy_ detach
    dropout empty empty_like empty_strided eq expand expand_as fill_ flatten floor floor_divide
    full full_like gather ge gt index index_put_ lift_fresh lift_fresh_copy masked_fill max
    narrow new_empty new_full new_ones new_zeros nonzero ones ones_like permute relu relu_
    remainder repeat reshape roll select size slice split split_with_sizes squeeze stack t to
    _to_copy transpose type_as unbind unsqueeze unsqueeze_ view zero_ zeros zeros_like
    """.split()  # noqa: SIM905  (a word list reads better than 75 quoted lines)
)


def op_key(op_name: str, caller: Callable) -> tuple[str, bool]:
    """The key of aten op ``op_name`` (``'addmm'``) emitted directly by ``caller`` (the
    running function of ``FUNCTION_OPS``, else the running module's ``forward``), and
    whether it is counted (False: it is part of the call's single op, not reported)."""
    call_op = FUNCTION_OPS.get(caller) or _MODULE_OPS.get(caller)
    if call_op is not None:
        key, counted_ops = call_op
        return key, op_name in counted_ops
    return "aten::" + _SCRIPT_NAMES.get(op_name, op_name), True


def script_layout(op_name: str, named: dict[str, Any], positional: list[Any]) -> list[Any]:
    """The inputs a handle gets: batch-norm variants in ``native_batch_norm``'s layout,
    other ops as they are (``positional``)."""
    if op_name not in _BATCH_NORM_OPS:
        return positional
    training = named.get("training", op_name == "_batch_norm_with_update")
    stats = [named.get("running_mean"), named.get("running_var")]
    momentum = named.get("momentum", named.get("exponential_average_factor"))
    eps = named.get("eps", named.get("epsilon"))
    return [named["input"], named.get("weight"), named.get("bias"), *stats, training, momentum, eps]


def _numel(tensor: Tensor) -> int:
    return math.prod(tensor.shape)


def matmul_flops(inputs: list[Any], outputs: list[Any]) -> int:
    """A matrix product (``mm``, ``mv``, ``bmm``, ``addmm``, ``baddbmm``): one multiply-add
    per output element and step of the contraction."""
    tensors = [value for value in inputs if isinstance(value, Tensor)]
    # addmm and baddbmm take the added term first
    left = tensors[1] if len(tensors) == 3 else tensors[0]
    return _numel(outputs[0]) * left.shape[-1]


def conv_flops(inputs: list[Any], outputs: list[Any]) -> Counter[str]:
    """``convolution(input, weight, bias, stride, padding, dilation, transposed, ...)``: every
    weight element once per output position (input position when transposed) and sample;
    bias is not counted. Reported as ``'conv'``."""
    data, weight, transposed = inputs[0], inputs[1], inputs[6]
    positions = (data if transposed else outputs[0]).shape[2:]
    return Counter(conv=data.shape[0] * _numel(weight) * math.prod(positions))


def norm_flops(weight_index: int) -> Handle:
    """A normalisation layer: a rough 5 flops per element with an affine weight (at
    ``inputs[weight_index]``), 4 without."""

    def handle(inputs: list[Any], outputs: list[Any]) -> int:
        return _numel(inputs[0]) * (5 if inputs[weight_index] is not None else 4)

    return handle


def batch_norm_flops(inputs: list[Any], outputs: list[Any]) -> int:
    """Batch norm: as :func:`norm_flops` when it normalises by batch statistics (training),
    else one flop per element (two with an affine weight: eval-time BN is a scale and shift)."""
    if inputs[5]:
        return norm_flops(1)(inputs, outputs)
    return _numel(inputs[0]) * (2 if inputs[1] is not None else 1)


def elementwise_flops(input_scale: float = 1, output_scale: float = 0) -> Handle:
    """``input_scale`` flops per element of the first input plus ``output_scale`` per
    element of the first output."""

    def handle(inputs: list[Any], outputs: list[Any]) -> float:
        flops = 0
        if input_scale:
            flops += input_scale * _numel(inputs[0])
        if output_scale:
            flops += output_scale * _numel(outputs[0])
        return flops

    return handle


def output_size(name: str | None = None) -> Handle:
    """Activations: the number of elements of the op's first output (a Counter under
    ``name`` when given, else a number named after the op)."""

    def handle(inputs: list[Any], outputs: list[Any]) -> int | Counter[str]:
        count = _numel(outputs[0])
        return count if name is None else Counter({name: count})

    return handle


#: the flops MMEngine counts by default (one fused multiply-add is one flop)
DEFAULT_FLOP_HANDLES: dict[str, Handle] = {
    "aten::_convolution": conv_flops,
    "aten::linear": matmul_flops,
    "aten::addmm": matmul_flops,
    "aten::mm": matmul_flops,
    "aten::mv": matmul_flops,
    "aten::bmm": matmul_flops,
    # BN is often fused into the conv at inference: set_op_handle('aten::batch_norm', None)
    "aten::batch_norm": batch_norm_flops,
    "aten::instance_norm": norm_flops(1),
    "aten::group_norm": norm_flops(1),
    "aten::layer_norm": norm_flops(2),
    "aten::upsample_nearest2d": elementwise_flops(0, 1),
    "aten::upsample_bilinear2d": elementwise_flops(0, 4),
    "aten::adaptive_avg_pool2d": elementwise_flops(1, 0),
    "aten::grid_sampler": elementwise_flops(0, 4),  # as if bilinear
}

#: the activations MMEngine counts by default: outputs of convolutions and matrix products
DEFAULT_ACTIVATION_HANDLES: dict[str, Handle] = {
    "aten::_convolution": output_size("conv"),
    "aten::linear": output_size(),
    "aten::addmm": output_size(),
    # `a @ b` and `einsum` reach the dispatcher as mm / mv / bmm
    "aten::mm": output_size(),
    "aten::mv": output_size(),
    "aten::bmm": output_size(),
}
