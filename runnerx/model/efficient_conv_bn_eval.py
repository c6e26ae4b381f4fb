"""Frozen BatchNorms folded into the convolutions before them, on the fly (MMEngine's
``efficient_conv_bn_eval``; "Tune-Mode ConvBN Blocks", arXiv 2305.11624).

.. code-block:: python

    efficient_conv_bn_eval = ['backbone']  # config key: attribute paths of sub-modules

A convolution whose output goes only to a BatchNorm in eval mode (a frozen BN, as when a
detector fine-tunes its backbone with ``norm_eval=True``) runs as one convolution with the
normalisation folded into its weight and bias, recomputed at each call from the current
parameters and statistics. Outputs and gradients are those of the two layers; the
convolution's output is neither kept for the BN's backward pass nor normalised in a second
pass, which saves memory and time. While the BN is in train mode the pair runs as usual.

Each module holding a convolution and a BN among its direct children has its own
``forward`` traced with ``torch.fx`` (its sub-modules stay single calls), each BN call that
takes a convolution call's output used nowhere else becomes one call of
:func:`efficient_conv_bn_eval_control`, and the module's class becomes an
``EfficientConvBN<Name>`` subclass running the rewritten forward. Parameters, buffers and
state-dict keys stay as they were; the forward is read once, so state it branches on is
fixed then. Where runnerx differs from MMEngine, which traces each named module whole:

- nested modules stay modules, so their hooks still run, and so do the activation
  checkpointing, per-block compile and FSDP that the Runner applies to them afterwards;
- a module whose forward cannot be traced, or differs between train and eval mode, keeps
  its forward (with a warning) instead of failing the whole named module (MMEngine raises);
- parameters with defaults are fixed at their defaults in the trace: a call that passes them
  runs the original forward;
- only convolutions and BNs with torch's own forward are folded; MMEngine also folds BN
  subclasses with a forward of their own (losing what it adds), and fails on a transposed
  convolution, on a BN without running statistics in eval mode and on a BN whose input is
  not a module's output (``bn(x + y)``): here those stay unfolded.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Sequence
from typing import Any

import torch
import torch.fx as fx
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd

from runnerx.suggest import did_you_mean

__all__ = [
    "efficient_conv_bn_eval_control",
    "efficient_conv_bn_eval_forward",
    "efficient_conv_bn_eval_graph_transform",
    "turn_on_efficient_conv_bn_eval",
    "turn_on_efficient_conv_bn_eval_for_single_model",
]

_logger = logging.getLogger(__name__)

#: the forwards the fold reproduces; a subclass overriding them does more than the fold knows
_CONV_FORWARDS = (nn.Conv1d.forward, nn.Conv2d.forward, nn.Conv3d.forward)
_BN_FORWARDS = (_BatchNorm.forward, nn.SyncBatchNorm.forward)
#: (class, rewritten forward's source) -> its folded subclass: identical blocks share one class,
#: so torch.compile compiles their forward once
_FOLDED_CLASSES: dict[tuple[type, str], type] = {}


def efficient_conv_bn_eval_forward(bn: _BatchNorm, conv: _ConvNd, x: torch.Tensor) -> torch.Tensor:
    """``bn(conv(x))`` for a ``bn`` in eval mode, as one convolution whose weight and bias have
    ``bn``'s running statistics and affine parameters folded in (a conv without bias and a BN
    without affine parameters work too)."""
    scale = torch.rsqrt(bn.running_var + bn.eps)
    if bn.weight is not None:
        scale = scale * bn.weight
    shift = -bn.running_mean if conv.bias is None else conv.bias - bn.running_mean
    bias = scale * shift
    if bn.bias is not None:
        bias = bias + bn.bias
    weight = conv.weight * scale.reshape(-1, *[1] * (conv.weight.dim() - 1))
    return conv._conv_forward(x, weight, bias)


def efficient_conv_bn_eval_control(bn: _BatchNorm, conv: _ConvNd, x: torch.Tensor) -> torch.Tensor:
    """``bn(conv(x))``: folded (:func:`efficient_conv_bn_eval_forward`) while ``bn`` normalises
    with its running statistics (eval mode), two module calls otherwise."""
    if bn.training or bn.running_var is None:
        return bn(conv(x))
    return efficient_conv_bn_eval_forward(bn, conv, x)


def efficient_conv_bn_eval_graph_transform(fx_model: fx.GraphModule) -> int:
    """Rewrite ``fx_model``'s graph in place: each call of a BN on the output of a convolution
    call that nothing else uses becomes one :func:`efficient_conv_bn_eval_control` call.
    Returns how many pairs were rewritten (MMEngine's returns None)."""
    modules = dict(fx_model.named_modules())
    graph = fx_model.graph
    pairs = [(node.args[0], node) for node in graph.nodes if _is_conv_bn(node, modules)]
    for conv_node, bn_node in pairs:
        with graph.inserting_before(conv_node):
            bn = graph.get_attr(bn_node.target)
            conv = graph.get_attr(conv_node.target)
            fused = graph.call_function(
                efficient_conv_bn_eval_control, (bn, conv, conv_node.args[0])
            )
        bn_node.replace_all_uses_with(fused)
        graph.erase_node(bn_node)
        graph.erase_node(conv_node)
    if pairs:
        graph.lint()
        fx_model.recompile()
    return len(pairs)


def turn_on_efficient_conv_bn_eval_for_single_model(model: nn.Module) -> None:
    """Fold the frozen BNs of ``model`` and its sub-modules into their convolutions, in place
    (see the module docstring)."""
    _fold_all(model, "")


def turn_on_efficient_conv_bn_eval(model: nn.Module, modules: str | Sequence[str]) -> None:
    """Fold the frozen BNs into their convolutions in the sub-modules of ``model`` at the
    attribute paths ``modules`` names (``'backbone'``, ``['backbone', 'neck.fpn']``), in place:
    what the Runner does with the ``efficient_conv_bn_eval`` config key."""
    names = [modules] if isinstance(modules, str) else modules
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise TypeError(
            "efficient_conv_bn_eval must be the attribute path of a sub-module or a list of "
            f"them, e.g. ['backbone'], but got {modules!r}"
        )
    targets = [(name, _submodule(model, name)) for name in names]
    for name, module in targets:
        folded = _fold_all(module, name)
        if folded:
            _logger.info(f"efficient_conv_bn_eval: {folded} conv -> bn pairs in {name} folded")
        else:
            _logger.warning(f"efficient_conv_bn_eval: {name} has no conv -> bn pair to fold")


def _is_plain_conv(module: nn.Module | None) -> bool:
    return getattr(type(module), "forward", None) in _CONV_FORWARDS


def _is_plain_bn(module: nn.Module | None) -> bool:
    return isinstance(module, _BatchNorm) and type(module).forward in _BN_FORWARDS


def _is_conv_bn(node: fx.Node, modules: dict[str, nn.Module]) -> bool:
    """Whether ``node`` calls a BN on the output of a convolution call used by nothing else."""
    if node.op != "call_module" or len(node.args) != 1 or node.kwargs:
        return False
    source = node.args[0]
    return (
        _is_plain_bn(modules.get(node.target))
        and isinstance(source, fx.Node)
        and source.op == "call_module"
        and len(source.args) == 1
        and not source.kwargs
        and len(source.users) == 1
        and _is_plain_conv(modules.get(source.target))
    )


def _fold_all(model: nn.Module, prefix: str) -> int:
    """Fold the pairs in the forward of every module of ``model`` holding a convolution and
    a BN; returns how many pairs were folded."""
    folded = 0
    for path, module in list(model.named_modules(prefix=prefix)):
        children = list(module.children())
        if (
            not getattr(module, "_runnerx_conv_bn_folded", False)
            and type(module).forward is not nn.Module.forward  # ModuleList, ModuleDict
            and any(map(_is_plain_conv, children))
            and any(map(_is_plain_bn, children))
        ):
            folded += _fold_in_forward(module, path or type(module).__name__)
    return folded


class _ChildrenAsLeaves(fx.Tracer):
    """Traces one module's own forward: each call of a sub-module stays one node."""

    def is_leaf_module(self, module: nn.Module, module_qualified_name: str) -> bool:
        return True


def _fold_in_forward(module: nn.Module, path: str) -> int:
    """Give ``module`` a forward with its pairs folded; returns how many (0: left as it is)."""
    cls = type(module)
    before = set(vars(module))  # the tracer stores tensor constants on the module
    try:
        params = list(inspect.signature(cls.forward).parameters.values())[1:]
        defaults = {p.name: p.default for p in params if p.default is not p.empty}
        eval_code = _trace(module, False, defaults).python_code("self").src
        for name in set(vars(module)) - before:  # so that the second trace names them alike
            delattr(module, name)
        graph = _trace(module, True, defaults)
    except Exception as error:  # whatever stops the tracer means "cannot be traced"
        reason = f"torch.fx cannot trace it ({type(error).__name__}: {error})"
        return _leave(module, path, before, reason)
    if graph.python_code("self").src != eval_code:
        return _leave(module, path, before, "its forward differs between train and eval mode")
    traced = fx.GraphModule(module, graph)
    folded = efficient_conv_bn_eval_graph_transform(traced)
    if not folded:
        return _leave(module, path, before, None)
    module.__class__ = _folded_class(cls, traced, len(params) - len(defaults))
    return folded


def _trace(module: nn.Module, training: bool, defaults: dict[str, Any]) -> fx.Graph:
    was_training = module.training
    module.training = training  # this module's flag only: its children are not traced
    try:
        return _ChildrenAsLeaves().trace(module, concrete_args=defaults or None)
    finally:
        module.training = was_training


def _leave(module: nn.Module, path: str, before: set[str], reason: str | None) -> int:
    """Undo what tracing added to ``module`` and say why it keeps its forward."""
    for name in set(vars(module)) - before:
        delattr(module, name)
    if reason:
        _logger.warning(
            f"efficient_conv_bn_eval: {path} ({type(module).__name__}) keeps its forward, "
            f"unfolded: {reason}"
        )
    return 0


def _folded_class(cls: type, traced: fx.GraphModule, positional: int) -> type:
    """The subclass of ``cls`` whose forward is ``traced``'s, for calls with the ``positional``
    arguments the trace took (other calls run ``cls``'s forward)."""
    key = (cls, traced.code)
    if key not in _FOLDED_CLASSES:
        rewritten = type(traced).forward

        def forward(self: nn.Module, *args: Any, **kwargs: Any) -> Any:
            if kwargs or len(args) != positional:
                return super(subclass, self).forward(*args, **kwargs)
            return rewritten(self, *args)

        subclass = type(
            f"EfficientConvBN{cls.__name__}",
            (cls,),
            {"forward": forward, "_runnerx_conv_bn_folded": True, "__module__": cls.__module__},
        )
        _FOLDED_CLASSES[key] = subclass
    return _FOLDED_CLASSES[key]


def _submodule(model: nn.Module, path: str) -> nn.Module:
    """The sub-module at the attribute path ``path`` (as MMEngine's ``attrgetter``), or an
    error naming the config key and the sub-modules there are."""
    module = model
    parts = path.split(".")
    for depth, part in enumerate(parts):
        child = getattr(module, part, None) if part else None
        if not isinstance(child, nn.Module):
            where = ".".join(parts[:depth]) or type(model).__name__
            children = ", ".join(name for name, _ in module.named_children()) or "none"
            paths = [name for name, _ in model.named_modules() if name]
            hint = did_you_mean(path, paths)
            raise AttributeError(
                f"efficient_conv_bn_eval: {path!r} is not a sub-module of "
                f"{type(model).__name__} (the sub-modules of {where}: {children}){hint}"
            )
        module = child
    return module
