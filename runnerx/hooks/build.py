"""From ``default_hooks`` and ``custom_hooks`` to the Runner's ordered hook list, and its table.

.. code-block:: python

    default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=5), timer=None)
    custom_hooks = [dict(type='EMAHook', priority='ABOVE_NORMAL')]
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from runnerx.config.config_dict import config_key_path, keyed_copy
from runnerx.hooks.hook import HOOK_POINTS, PRIORITIES, Hook, get_priority
from runnerx.hooks.lightning_callbacks import callback_methods_warning
from runnerx.registry import HOOKS
from runnerx.suggest import close_matches

logger = logging.getLogger(__name__)

#: The hooks every run has unless ``default_hooks`` turns one off with None (MMEngine's set,
#: ``preemption``: a checkpoint before the job is stopped, and ``model_summary``: the model's
#: parameter counts logged when training starts).
DEFAULT_HOOKS: dict[str, dict[str, Any]] = {
    "runtime_info": {"type": "RuntimeInfoHook"},
    "timer": {"type": "IterTimerHook"},
    "sampler_seed": {"type": "DistSamplerSeedHook"},
    "logger": {"type": "LoggerHook"},
    "param_scheduler": {"type": "ParamSchedulerHook"},
    "checkpoint": {"type": "CheckpointHook", "interval": 1},
    "preemption": {"type": "PreemptionHook"},
    "model_summary": {"type": "ModelSummaryHook"},
}


def build_hooks(
    default_hooks_cfg: Mapping[str, Any] | None = None,
    custom_hooks_cfg: Sequence[Any] | None = None,
) -> list[Hook]:
    """The hooks of a run, sorted by priority (equal priorities keep their order, the default
    hooks before the custom ones).

    ``default_hooks_cfg`` maps names to a config dict, a Hook, or None; it replaces the entries
    of :data:`DEFAULT_HOOKS` it names (None removes one) and adds the others. An entry for a
    default name without ``type`` is merged into that default
    (``logger=dict(interval=50)``). ``custom_hooks_cfg`` is a list of configs or Hooks. A
    config's ``priority`` (a name such as ``'LOW'`` or a number 0-100) overrides the class's.
    """
    if default_hooks_cfg is not None and not isinstance(default_hooks_cfg, Mapping):
        raise TypeError(
            "default_hooks must be a dict of name -> hook config (None to turn a default "
            f"hook off), got {type(default_hooks_cfg).__name__}"
        )
    if custom_hooks_cfg is not None and (
        isinstance(custom_hooks_cfg, (str, Mapping)) or not isinstance(custom_hooks_cfg, Sequence)
    ):
        raise TypeError(
            f"custom_hooks must be a list of hook configs, got {type(custom_hooks_cfg).__name__}"
        )
    chosen: dict[str, Any] = dict(DEFAULT_HOOKS)
    chosen.update(default_hooks_cfg or {})
    defaults = {
        name: _build(cfg, f"default_hooks.{name}", DEFAULT_HOOKS.get(name))
        for name, cfg in chosen.items()
        if cfg is not None
    }
    custom = [
        _build(cfg, f"custom_hooks[{index}]", None)
        for index, cfg in enumerate(custom_hooks_cfg or ())
    ]
    _warn_doubled_defaults(defaults, custom)
    return sorted([*defaults.values(), *custom], key=lambda hook: _priority_of(hook))


def _warn_doubled_defaults(defaults: dict[str, Hook], custom: list[Hook]) -> None:
    """A custom hook of a default hook's class runs beside it, doing its work twice (a
    second ParamSchedulerHook steps every scheduler twice): say so, and how to have one."""
    for index, hook in enumerate(custom):
        for name, default in defaults.items():
            if type(hook) is type(default):
                kind = type(hook).__name__
                logger.warning(
                    f"custom_hooks[{index}] is a {kind}, as default_hooks.{name} is: both run, "
                    f"so its work is done twice; configure the one in default_hooks.{name}, or "
                    f"set default_hooks.{name}=None to keep only the custom one"
                )


def _build(cfg: Any, where: str, default: dict[str, Any] | None) -> Hook:
    if isinstance(cfg, Hook):
        return cfg
    if not isinstance(cfg, Mapping):
        dict_as_text = isinstance(cfg, str) and cfg.strip().startswith("{")
        raise TypeError(
            f"{where} must be a hook config dict or a Hook"
            + (" (or None to turn it off)" if default is not None else "")
            + f", got {type(cfg).__name__}: {cfg!r}"
            + (
                "; --cfg-options gives no dicts, only values, lists and tuples: add the hook "
                "in a config that inherits this one (_base_ = 'CONFIG'; custom_hooks = "
                "[dict(type=...)]), or set its keys one by one (default_hooks.NAME.KEY=VALUE)"
                if dict_as_text
                else ""
            )
        )
    if not cfg and default is not None:
        _warn_empty_default(where, default)
    priority = cfg.get("priority")
    if priority is not None:
        _check_priority(priority, f"{where}.priority")
        cfg = _without_priority(cfg)
    defaults = default if default is not None and "type" not in cfg else None
    hook = HOOKS.build(cfg, default_args=defaults)
    if not isinstance(hook, Hook):
        raise TypeError(
            f"{where} built a {type(hook).__name__}, which is not a hook; hook classes "
            "subclass runnerx.hooks.Hook"
        )
    if priority is not None:
        hook.priority = priority
    return hook


def _without_priority(cfg: Mapping[str, Any]) -> Mapping[str, Any]:
    """A copy of ``cfg`` without ``priority`` (a hook's constructor does not take it) that
    keeps its config key, so that build errors still name ``cfg.custom_hooks.N``."""
    path = config_key_path(cfg)
    if not path:
        return {key: value for key, value in cfg.items() if key != "priority"}
    copied = keyed_copy(cfg, path)
    del copied["priority"]
    return copied


def _warn_empty_default(where: str, default: dict[str, Any]) -> None:
    """An empty default-hook entry (what ``dict(_delete_=True)`` leaves) builds the built-in
    hook, which is rarely what it was written for: say so, and how to turn it off."""
    arguments = ", ".join(f"{key}={value!r}" for key, value in default.items() if key != "type")
    logger.warning(
        f"{where} is empty, so the built-in {default['type']}({arguments}) is used; set it to "
        "None to turn that hook off"
    )


def _check_priority(priority: Any, where: str) -> int:
    try:
        return get_priority(priority)
    except (TypeError, ValueError) as err:
        raise type(err)(f"{where}: {err}") from None


def _priority_of(hook: Hook) -> int:
    return _check_priority(hook.priority, f"{type(hook).__name__}.priority")


def format_hook_table(hooks: Sequence[Hook]) -> str:
    """The hooks at each point they act at, in run order, as MMEngine logs them at start::

    before_train:
    (VERY_HIGH   ) RuntimeInfoHook
    (VERY_LOW    ) CheckpointHook
     --------------------
    """
    names = {number: name for name, number in PRIORITIES.items()}
    rows = []
    for hook in hooks:
        number = _priority_of(hook)
        label = f"({names.get(number, number)!s:<12}) {type(hook).__name__}"
        rows.append((label, set(hook.overridden_points())))
    sections = []
    for point in HOOK_POINTS:
        labels = [label for label, points in rows if point in points]
        if labels:
            sections.append(f"{point}:\n" + "\n".join(labels) + "\n -------------------- ")
    return "\n".join(sections)


def check_hook_points(hook: Hook) -> list[str]:
    """The Runner's check of a hook it registers: refuse (TypeError) a hook point method that
    cannot take the arguments the loops pass (see :func:`_check_point_signatures`), and return
    a warning for each method named like a hook point that is none
    (``after_train_iteration``): the Runner's loops never call it, and nothing else says so.
    (A custom loop's own points, called with ``runner.call_hook``, are the exception.) One
    more warning names the Lightning Callback methods nothing calls (``on_train_epoch_end``)."""
    kind = type(hook)
    _check_point_signatures(kind)
    _check_instance_points(hook)
    names = {
        name
        for klass in kind.__mro__
        if klass not in (Hook, object)
        for name, value in vars(klass).items()
        if name.startswith(("before_", "after_")) and callable(value)
    }
    warnings = []
    for name in sorted(names - set(HOOK_POINTS)):
        close = _points_meant(name)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        warnings.append(
            f"{kind.__name__}.{name} is not a hook point, so the Runner's loops never call it "
            f"(only a custom loop that calls runner.call_hook({name!r}) does){hint}"
        )
    callback_methods = callback_methods_warning(kind)
    return warnings if callback_methods is None else [*warnings, callback_methods]


def _points_meant(name: str) -> list[str]:
    """The hook points a misnamed method likely meant: MMCV 1.x's mode-less points
    (``before_epoch``, ``after_iter``) are each mode's, training first; else close matches."""
    when, _, rest = name.partition("_")
    per_mode = [f"{when}_{mode}_{rest}" for mode in ("train", "val", "test")]
    meant = [point for point in per_mode if point in HOOK_POINTS]
    return meant or close_matches(name, HOOK_POINTS, n=2)


@cache  # once per hook class
def _check_point_signatures(kind: type) -> None:
    """Refuse (TypeError) a hook point method of the hook class ``kind`` that cannot be
    called as the Runner's loops (and MMEngine's) call it: the runner, then the point's other
    arguments by keyword (``after_train_iter(runner, batch_idx=..., data_batch=...,
    outputs=...)``). Else ``def after_train_iter(self, runner)`` fails only at the first
    iteration, with a TypeError whose traceback does not show the method. A method taking
    ``**kwargs`` is fine."""
    for point in HOOK_POINTS:
        method = inspect.getattr_static(kind, point, None)
        if inspect.isfunction(method) and method is not getattr(Hook, point):
            _refuse_unfit(f"{kind.__name__}.{point}", point, method, bound=False)
        # else the base's, or not a plain method (a staticmethod, a callable object)


def _check_instance_points(hook: Hook) -> None:
    """As :func:`_check_point_signatures`, for the functions and bound methods a hook
    instance holds under a point's name (``self.before_train = self._start``); other
    callables (a ``Mock``, a ``partial``) are left to their first call."""
    for point, value in getattr(hook, "__dict__", {}).items():
        if point in HOOK_POINTS and (inspect.isfunction(value) or inspect.ismethod(value)):
            where = f"{type(hook).__name__}.{point} (set on the instance)"
            _refuse_unfit(where, point, value, bound=True)


def _refuse_unfit(where: str, point: str, function: Any, bound: bool) -> None:
    """Refuse (TypeError) ``function``, the hook point ``point`` (named ``where``), when it
    cannot take the runner and the point's other arguments by keyword; ``bound``: it takes
    no ``self`` (a bound method, or a function set on the instance)."""
    try:
        signature = _plain_signature(function)
    except ValueError:  # none to check
        return
    expected = _plain_signature(getattr(Hook, point))
    keywords = list(expected.parameters)[2:]  # after self and runner
    leading = ("runner",) if bound else ("self", "runner")
    try:
        signature.bind(*leading, **dict.fromkeys(keywords))
    except TypeError:
        if bound:
            expected = expected.replace(parameters=list(expected.parameters.values())[1:])
        code = inspect.unwrap(function).__code__
        passed = ", ".join(["runner", *(f"{name}=..." for name in keywords)])
        raise TypeError(
            f"{where}{signature} ({code.co_filename}:{code.co_firstlineno}) cannot take the "
            f"arguments the Runner (as MMEngine's) calls it with, {point}({passed}): define "
            f"it as {point}{expected}, or give it **kwargs"
        ) from None


def _plain_signature(function: Any) -> inspect.Signature:
    """``function``'s signature without annotations, as a user would write it."""
    signature = inspect.signature(function)
    return signature.replace(
        parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
        return_annotation=signature.empty,
    )
