"""FlopAnalyzer and ActivationAnalyzer: per-module flop and activation counts of one forward.

MMEngine's classes of the same names (fvcore's) trace the model with ``torch.jit``; these run
it eagerly under a dispatch mode (:mod:`.op_tracker`) and give the same numbers for the usual
layers. Where they differ:

- ``matmul``/``einsum`` reach the dispatcher as ``mm``/``mv``/``bmm`` and are reported under
  those names; a matmul that broadcasts its *second* operand over a batch counts the real,
  broadcast work (MMEngine counts it once). An ``einsum`` with no summed index becomes an
  elementwise product and is not counted (MMEngine counts half its size).
- ``torch.mm`` called directly counts activations here (MMEngine counts none for ``mm``).
- ``F.adaptive_avg_pool2d(x, 1)`` and ``F.instance_norm`` called as functions (not through
  their ``nn`` modules) arrive as ``mean`` and batch norm: the pooling is not counted, the
  instance norm is counted as batch norm.
- Attention (``F.scaled_dot_product_attention``) is unsupported in both (no flops), except
  where PyTorch picks its unfused "math" path, whose matmuls are counted here.
- The op names in ``unsupported_ops()`` are the dispatcher's where no TorchScript name is
  known; a module called but running no op is not "uncalled" here.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from typing import Any, TypeVar

from torch import nn

from runnerx.suggest import close_matches

from .op_counters import DEFAULT_ACTIVATION_HANDLES, DEFAULT_FLOP_HANDLES, IGNORED_OPS, Handle
from .op_tracker import CountSpec, Statistics, collect_statistics, module_aliases

T = TypeVar("T", bound="ModelAnalysis")

_logger = logging.getLogger(__name__)
#: the warnings already logged: each once per process, as MMEngine's logger drops a repeated
#: warning (a flop then an activation analysis, or one analysis per model in a script)
_LOGGED: set[str] = set()

_WARNING_MODES = ("all", "no_tracer_warning", "none")
_ANCESTOR_MODES = ("owner", "caller")
#: forwards that are not meant to be called (containers) or run no op: never warned about
_NO_FORWARD = (nn.Module.forward, nn.Identity.forward)


class ModelAnalysis:
    """Per-module statistics of one forward of ``model`` on ``inputs`` (a tensor, or a tuple
    unpacked into the forward's arguments), counted by op handles (see :mod:`.op_counters`).

    The model runs on the first request and again after the handles change. Modules are
    named as in ``named_modules()`` (``''`` is the model); an op counts for the module whose
    ``__call__`` runs it and that module's ancestors, so work done in a method other than
    ``forward`` counts for the calling module.
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        self._model = model
        self._inputs = inputs
        self._aliases = module_aliases(model)
        self._op_handles: dict[str, Handle] = {}
        self._ignored_ops: set[str] = set(IGNORED_OPS)
        self._stats: Statistics | None = None
        self._warn_unsupported = True
        self._warn_uncalled = True
        self._warning_mode = "no_tracer_warning"
        self._ancestor_mode = "owner"

    def total(self, module_name: str = "") -> int:
        """The statistic of ``module_name`` (the whole model by default), over all ops."""
        return sum(self.by_operator(module_name).values())

    def by_operator(self, module_name: str = "") -> Counter[str]:
        """The statistic of ``module_name`` by operator (``Counter({'conv': ..., ...})``)."""
        return self._analyze().counts[self.canonical_module_name(module_name)]

    def by_module_and_operator(self) -> dict[str, Counter[str]]:
        """Every module's statistic by operator, keyed by module name."""
        return self._analyze().counts

    def by_module(self) -> Counter[str]:
        """Every module's statistic over all its ops, keyed by module name."""
        return Counter({name: sum(ops.values()) for name, ops in self._analyze().counts.items()})

    def unsupported_ops(self, module_name: str = "") -> Counter[str]:
        """How often each op with no handle (and not ignored) ran in ``module_name``."""
        return self._analyze().unsupported_ops[self.canonical_module_name(module_name)]

    def uncalled_modules(self) -> set[str]:
        """Modules that never ran during the forward (unused, or reached through a method or
        ``.forward()`` directly: their ops then count for their caller)."""
        return self._analyze().uncalled_mods

    def set_op_handle(self: T, *args: Any, **kwargs: Handle | None) -> T:
        """Add or replace op handles, as ``('aten::x', handle, ...)`` pairs and/or keywords;
        a handle of ``None`` ignores the op::

            FlopAnalyzer(model, x).set_op_handle('aten::batch_norm', None)  # BN costs 0

        MMEngine (and fvcore) add ``None`` to the ignored ops but keep the op's handle, so
        an op that has one is still counted: a bug; here ``None`` removes the handle.
        """
        if len(args) % 2:
            raise TypeError("set_op_handle takes pairs of (op name, handle) as arguments")
        for name, handle in {**dict(zip(args[::2], args[1::2])), **kwargs}.items():
            if handle is None:
                self._op_handles.pop(name, None)
                self._ignored_ops.add(name)
            else:
                self._ignored_ops.discard(name)
                self._op_handles[name] = handle
        self._stats = None
        return self

    def clear_op_handles(self: T) -> T:
        """Remove every op handle (and the ops ignored through ``set_op_handle``)."""
        self._op_handles = {}
        self._ignored_ops = set(IGNORED_OPS)
        self._stats = None
        return self

    def canonical_module_name(self, name: str) -> str:
        """The name statistics are kept under for the module called ``name`` (a module
        shared under several names keeps its first one)."""
        if not isinstance(name, str):
            raise TypeError(f"module_name must be a str, got {type(name).__name__}")
        if name not in self._aliases:
            names = [key for key in self._aliases if isinstance(key, str)]
            hint = close_matches(name, names)
            raise KeyError(
                f"{name!r} is not a module of the analysed model"
                + (f"; did you mean {', '.join(map(repr, hint))}?" if hint else "")
            )
        return self._aliases[name]

    def copy(self, new_model: nn.Module | None = None, new_inputs: Any = None) -> ModelAnalysis:
        """The same analysis (handles, ignored ops, settings) of another model or inputs."""
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._model = self._model if new_model is None else new_model
        other._inputs = self._inputs if new_inputs is None else new_inputs
        other._aliases = module_aliases(other._model)
        other._op_handles = dict(self._op_handles)
        other._ignored_ops = set(self._ignored_ops)
        other._stats = None
        return other

    def tracer_warnings(self: T, mode: str) -> T:
        """Which warnings the forward may raise: ``'all'``, ``'none'``, or
        ``'no_tracer_warning'`` (the default; there is no tracer here, so as ``'all'``)."""
        if mode not in _WARNING_MODES:
            raise ValueError(f"tracer_warnings mode must be one of {_WARNING_MODES}, got {mode!r}")
        self._warning_mode = mode
        return self

    def ancestor_mode(self: T, mode: str) -> T:
        """Which modules an op counts for: ``'owner'`` (the default: the module running it
        and its ancestors by name) or ``'caller'`` (every module whose call is running).
        Totals are the same; they differ only for modules shared or called across the tree."""
        if mode not in _ANCESTOR_MODES:
            raise ValueError(f"ancestor_mode must be one of {_ANCESTOR_MODES}, got {mode!r}")
        self._ancestor_mode = mode
        self._stats = None
        return self

    def unsupported_ops_warnings(self: T, enabled: bool) -> T:
        """Whether to log a warning per unsupported op (``unsupported_ops()`` lists them
        either way)."""
        self._warn_unsupported = enabled
        return self

    def uncalled_modules_warnings(self: T, enabled: bool) -> T:
        """Whether to log a warning naming the uncalled modules."""
        self._warn_uncalled = enabled
        return self

    def _spec(self) -> CountSpec:
        return CountSpec(dict(self._op_handles), set(self._ignored_ops), self._ancestor_mode)

    def _analyze(self) -> Statistics:
        if self._stats is None:
            analyze_together(self)
        assert self._stats is not None
        return self._stats

    def _set_stats(self, stats: Statistics) -> None:
        self._stats = stats
        if self._warn_unsupported:
            for op, times in stats.unsupported_ops[""].items():
                _warn_once(f"Unsupported operator {op} encountered {times} time(s)")
        named = dict(self._model.named_modules())
        uncalled = sorted(
            name
            for name in stats.uncalled_mods
            if name in named and type(named[name]).forward not in _NO_FORWARD
        )
        if self._warn_uncalled and uncalled:
            _warn_once(
                "These submodules never ran during the forward, so they show no statistics "
                "(unused, or reached through .forward() or another method: then their work "
                f"counts for the module calling them): {', '.join(uncalled)}"
            )


def _warn_once(message: str) -> None:
    """Log ``message`` as a WARNING of ``runnerx.analysis`` (shown by the running Runner's
    logger, else by ``logging``'s defaults on stderr) unless this process logged it before."""
    if message not in _LOGGED:
        _LOGGED.add(message)
        _logger.warning(message)


def analyze_together(*analyses: ModelAnalysis) -> None:
    """Compute the statistics of analyses of the same model and inputs in one forward."""
    first = analyses[0]
    if any(a._model is not first._model or a._inputs is not first._inputs for a in analyses):
        raise ValueError("analyze_together needs analyses of the same model and inputs")
    results = collect_statistics(
        first._model,
        first._inputs,
        first._aliases,
        [analysis._spec() for analysis in analyses],
        silence_warnings=any(a._warning_mode == "none" for a in analyses),
    )
    for analysis, stats in zip(analyses, results):
        analysis._set_stats(stats)


class FlopAnalyzer(ModelAnalysis):
    """Flops per module and operator, one fused multiply-add counting as one flop (as in
    MMEngine and fvcore): convolutions, linear layers and matrix products, normalisation
    layers, upsampling, adaptive average pooling and grid sampling; other ops are reported by
    ``unsupported_ops()`` (elementwise ops, softmax, attention...) or skipped (shape ops)::

        flops = FlopAnalyzer(model, torch.randn(1, 3, 224, 224))
        flops.total(), flops.by_module()['backbone'], flops.by_operator()
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model, inputs)
        self.set_op_handle(**DEFAULT_FLOP_HANDLES)


class ActivationAnalyzer(ModelAnalysis):
    """Activations per module and operator: the output elements of convolutions, linear
    layers and matrix products::

        acts = ActivationAnalyzer(model, torch.randn(1, 3, 224, 224))
        acts.total(), acts.by_module()
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model, inputs)
        self.set_op_handle(**DEFAULT_ACTIVATION_HANDLES)


def _count(
    analysis: ModelAnalysis, supported_ops: dict[str, Handle] | None, scale: float
) -> tuple[defaultdict[str, float], Counter[str]]:
    analysis.set_op_handle(**(supported_ops or {}))
    by_operator = defaultdict(float, {op: n / scale for op, n in analysis.by_operator().items()})
    return by_operator, analysis.unsupported_ops()


def flop_count(
    model: nn.Module, inputs: tuple, supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """GFlops of one forward by operator, and the unsupported ops with how often each ran;
    ``supported_ops`` adds or replaces handles (``{'aten::gelu': my_handle}``)."""
    return _count(FlopAnalyzer(model, inputs), supported_ops, 1e9)


def activation_count(
    model: nn.Module, inputs: tuple, supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """Mega-activations of one forward by operator, and the unsupported ops."""
    return _count(ActivationAnalyzer(model, inputs), supported_ops, 1e6)
