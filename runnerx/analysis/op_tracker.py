"""Run a model once and attribute every aten op to the modules running it.

A ``TorchDispatchMode`` sees each op that reaches the dispatcher; forward pre/post hooks on
every submodule keep the stack of modules whose ``__call__`` is running, and a
``TorchFunctionMode`` marks the ops emitted inside the torch functions MMEngine's trace
records as one op (``F.linear``). An op belongs to the
innermost module and its ancestors by name (``'owner'``), or to every module on the stack
(``'caller'``). No tracing: the model runs eagerly, so data-dependent Python control flow
takes the branch these inputs take.

A custom ``torch.autograd.Function`` (an extension's kernel: deformable conv, ROIAlign) is
one op ``prim::PythonOp.<ClassName>``, the key MMEngine's trace gives it: a handle set for
that key counts the whole call (and the ops inside it are not counted); without one, the
ops inside are counted as they are, and a call with none to count (a C++ or numpy kernel the
dispatcher never sees) is reported as unsupported rather than counted as nothing.
"""

from __future__ import annotations

import contextlib
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from .op_counters import FUNCTION_OPS, Handle, op_key, script_layout


@dataclass
class Statistics:
    """What one analysis found: counts by module then by operator, unsupported ops by module
    then by op key, and the modules that were neither called nor given an op."""

    counts: dict[str, Counter[str]]
    unsupported_ops: dict[str, Counter[str]]
    uncalled_mods: set[str]


@dataclass
class CountSpec:
    """What one analysis counts: handles by op key, op keys skipped silently, and
    ``'owner'`` or ``'caller'`` attribution."""

    handles: dict[str, Handle]
    ignored: set[str]
    ancestor_mode: str = "owner"


def named_modules_with_dup(model: nn.Module, prefix: str = "") -> Iterator[tuple[str, nn.Module]]:
    """``model.named_modules()``, but a module reachable under several names is yielded
    under each of them."""
    yield prefix, model
    for name, child in model._modules.items():
        if child is not None:
            yield from named_modules_with_dup(child, f"{prefix}.{name}" if prefix else name)


def module_aliases(model: nn.Module) -> dict[nn.Module | str, str]:
    """Each module, and each of its names, -> its canonical name (the first one it has)."""
    aliases: dict[nn.Module | str, str] = {}
    for name, module in named_modules_with_dup(model):
        aliases.setdefault(module, name)
        aliases[name] = aliases[module]
    return aliases


def _ancestors(name: str) -> set[str]:
    parts = name.split(".") if name else []
    return {".".join(parts[:depth]) for depth in range(len(parts) + 1)}


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _handle_inputs(func: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The op's arguments in schema order, keyword arguments and defaults filled in."""
    schema_args = func._schema.arguments
    named = {arg.name: value for arg, value in zip(schema_args, args)}
    for arg in schema_args[len(args) :]:
        named[arg.name] = kwargs.get(arg.name, arg.default_value)
    return script_layout(func.overloadpacket.__name__, named, list(named.values()))


class _OpRecorder(TorchDispatchMode):
    """Hands each aten op, its arguments and results to ``on_op`` after running it."""

    def __init__(self, on_op: Any) -> None:
        super().__init__()
        self.on_op = on_op

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.on_op(func, args, kwargs, out)
        return out


#: calls a function one ``__torch_function__`` hop down, so that a mode stays active for the
#: calls inside a Python torch function; only in newer torch
_redispatch = getattr(torch.overrides, "redispatch_function", None)


class _FunctionWatcher(TorchFunctionMode):
    """Keeps ``running`` (a stack) of the calls to functions of ``FUNCTION_OPS`` in progress.

    A mode does not see the calls made inside a Python torch function; it is let into those
    of ``torch.nn.functional`` (``F.multi_head_attention_forward`` calls ``F.linear``) where
    torch can redispatch, and not elsewhere (``Tensor`` methods call themselves through
    ``super()``, which would recurse).
    """

    def __init__(self) -> None:
        super().__init__()
        self.running: list[Any] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in FUNCTION_OPS:
            self.running.append(func)
            try:
                return func(*args, **kwargs)
            finally:
                self.running.pop()
        if _redispatch is not None and getattr(func, "__module__", None) == F.__name__:
            with self:
                return _redispatch(func, types, args, kwargs)
        return func(*args, **kwargs)


@dataclass
class _FunctionCall:
    """A custom autograd Function's ``apply`` in progress: its op key and, for each spec,
    whether an op inside it was counted or reported."""

    key: str
    inside: list[bool] = field(default_factory=list)


@contextlib.contextmanager
def _watching_autograd_functions(
    calls: list[_FunctionCall], n_specs: int, on_call: Callable[[_FunctionCall, tuple, Any], None]
) -> Iterator[None]:
    """Route ``torch.autograd.Function.apply`` through ``calls`` (the stack of calls in
    progress) and hand each finished call to ``on_call``; restored on exit."""
    original = torch.autograd.Function.__dict__["apply"]

    def apply(cls: type, *args: Any, **kwargs: Any) -> Any:
        call = _FunctionCall(f"prim::PythonOp.{cls.__name__}", [False] * n_specs)
        calls.append(call)
        try:
            out = original.__func__(cls, *args, **kwargs)
        finally:
            calls.pop()
        on_call(call, args, out)
        return out

    torch.autograd.Function.apply = classmethod(apply)
    try:
        yield
    finally:
        torch.autograd.Function.apply = original


def collect_statistics(
    model: nn.Module,
    inputs: Any,
    aliases: dict[nn.Module | str, str],
    specs: Sequence[CountSpec],
    silence_warnings: bool = False,
) -> list[Statistics]:
    """Run ``model`` on ``inputs`` (a tuple is unpacked into arguments) once and count, for
    each spec, its statistic per module. DDP / DataParallel wrappers are looked through."""
    names = [aliases[module] for _, module in named_modules_with_dup(model)]
    results = [
        Statistics({n: Counter() for n in names}, {n: Counter() for n in names}, set())
        for _ in specs
    ]
    root_name = aliases[model]
    if isinstance(model, (nn.parallel.DistributedDataParallel, nn.DataParallel)):
        model = model.module
    stack: list[tuple[nn.Module, str]] = [(model, root_name)]
    called: set[str] = set()
    seen: list[set[str]] = [set() for _ in specs]
    functions = _FunctionWatcher()
    calls: list[_FunctionCall] = []

    def record(
        key: str,
        counted: bool,
        inputs: Callable[[], list[Any]],
        out: Any,
        call: _FunctionCall | None = None,
    ) -> None:
        """Count one op under ``key`` for each spec, for the modules running it; ``call`` is
        the autograd Function the op stands for, reported only where nothing inside it was."""
        innermost = stack[-1][1]
        callers = {name for _, name in stack}
        handle_inputs = None
        for index, (spec, stats, spec_seen) in enumerate(zip(specs, results, seen)):
            owners = callers if spec.ancestor_mode == "caller" else _ancestors(innermost)
            spec_seen |= owners
            if not counted or key in spec.ignored:
                continue
            if any(running.key in spec.handles for running in calls):
                continue  # inside a Function whose handle counts the whole call
            handle = spec.handles.get(key)
            if handle is None and call is not None and call.inside[index]:
                continue  # the ops inside the Function were counted one by one
            for running in calls:
                running.inside[index] = True
            if handle is None:
                for name in owners:
                    stats.unsupported_ops[name][key] += 1
                continue
            if handle_inputs is None:
                handle_inputs = inputs()
            count = handle(handle_inputs, _as_list(out))
            if not isinstance(count, Counter):
                count = Counter({key.split("::", 1)[-1]: count})
            for name in owners:
                stats.counts[name] += count  # as Counter addition: zero counts are dropped

    def on_op(func: Any, args: tuple, kwargs: dict, out: Any) -> None:
        module = stack[-1][0]
        caller = functions.running[-1] if functions.running else type(module).forward
        key, counted = op_key(func.overloadpacket.__name__, caller)
        record(key, counted, lambda: _handle_inputs(func, args, kwargs), out)

    def on_call(call: _FunctionCall, args: tuple, out: Any) -> None:
        record(call.key, True, lambda: list(args), out, call)

    hooks = []
    for module in {id(m): m for _, m in named_modules_with_dup(model)}.values():
        name = aliases.get(module, root_name)

        def push(mod: nn.Module, args: Any, name: str = name) -> None:
            stack.append((mod, name))
            called.add(name)

        def pop(mod: nn.Module, args: Any, out: Any) -> None:
            stack.pop()

        hooks.append(module.register_forward_pre_hook(push))
        hooks.append(module.register_forward_hook(pop, always_call=True))
    try:
        with warnings.catch_warnings():
            if silence_warnings:
                warnings.simplefilter("ignore")
            watching = _watching_autograd_functions(calls, len(specs), on_call)
            with functions, _OpRecorder(on_op), watching:
                if isinstance(inputs, tuple):
                    model(*inputs)
                else:
                    model(inputs)
    finally:
        for hook in hooks:
            hook.remove()
    for stats, spec_seen in zip(results, seen):
        stats.uncalled_mods = set(names) - called - spec_seen
    return results
