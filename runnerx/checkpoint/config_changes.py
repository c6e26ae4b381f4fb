"""What a resume says about the config: the keys whose values differ between the config a
checkpoint was saved with (``meta['cfg']``, its text, read as data and never run) and this
run's, split into the changes the resumed run uses and those the restored state overrides.

Resuming is exact, as in MMEngine: the optimizer, the schedulers and the data order continue
as saved, so a changed learning rate or sampler seed in the config is not used; the warning
says so, and how to start from the weights with the new values instead.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import Any

from runnerx.suggest import more_than

#: Keys a resumed run is expected to change: where it runs and from what, and a schedule
#: extended to train on (checked by :func:`~runnerx.checkpoint.resume_checks.warn_if_nothing_left`);
#: ``randomness.seed`` has its own warning. Prefixes of dotted key paths.
EXPECTED_CHANGES = (
    "work_dir",
    "resume",
    "load_from",
    "launcher",
    "unsafe_load",
    "train_cfg.max_epochs",
    "train_cfg.max_iters",
    "randomness.seed",
)
#: Keys whose effect a resume replaces by the saved state: the optimizer's hyperparameters
#: (its param groups are restored) and the schedulers (their state is restored).
_OPTIMIZER_KEYS = re.compile(r"^(auto_scale_lr|optim_wrapper(\.\w+)?\.(optimizer|paramwise_cfg))\b")
_SCHEDULER_KEYS = re.compile(r"^param_scheduler\b")
#: A scheduler's end, which a resume names itself when the restored one differs from the
#: one this config builds (``resume_checks.warn_of_restored_schedule_ends``).
_SCHEDULER_END = re.compile(r"^param_scheduler(\.\w+)*\.end$")
#: The training sampler's seed, which the loop takes from the checkpoint's data position.
_SAMPLER_SEED = "train_dataloader.sampler.seed"
_SHOWN = 8  # changed keys named in each part of the warning


def warn_of_config_changes(
    runner: Any,
    path: str,
    saved_text: Any,
    optimizer: bool,
    schedulers: bool,
    data_seed: int | None = None,
) -> None:
    """Log one warning naming the keys whose values differ between the config the checkpoint
    at ``path`` was saved with (``saved_text``) and this run's, leaving out
    :data:`EXPECTED_CHANGES` (and the schedulers' ``end`` when they are restored: that
    warning is more precise), in two parts: those used as configured now, and those the
    restored state overrides, with the reason and how to start from the weights instead.
    Overridden are the optimizer's keys and the schedulers' when their state (``optimizer``
    / ``schedulers``) was restored, and the training sampler's seed when the checkpoint's
    data position gives one (``data_seed``)."""
    current_text = getattr(runner, "cfg_text", None)
    if not saved_text or not current_text or not isinstance(saved_text, str):
        return
    before, now = _config_values(saved_text), _config_values(current_text)
    if before is None or now is None:
        return
    old, new = dict(_leaves(before)), dict(_leaves(now))
    changed = [
        key
        for key in dict.fromkeys([*new, *old])
        if old.get(key, _ABSENT) != new.get(key, _ABSENT)
        and not key.startswith(tuple(f"{k}." for k in EXPECTED_CHANGES))
        and key not in EXPECTED_CHANGES
        and not (schedulers and _SCHEDULER_END.match(key))
    ]
    changed = [key for key in changed if not _empty_beside_contents(key, old, new, changed)]
    if not changed:
        return
    reasons = {key: _overridden_by(key, new, optimizer, schedulers, data_seed) for key in changed}
    message = f"resume: the config differs from the one {path} was saved with"
    used = [key for key in changed if reasons[key] is None]
    if used:
        message += f". Used as configured now: {_listed(used, old, new)}"
    overridden = {
        why: [key for key in changed if reasons[key] == why]
        for why in dict.fromkeys(reasons.values())
        if why is not None
    }
    if overridden:
        parts = "; ".join(f"{_listed(keys, old, new)} ({why})" for why, keys in overridden.items())
        message += (
            f". Not used, the restored state wins: {parts}. To train with the new values, "
            f"start a new run from these weights: load_from='{path}' and resume=False"
        )
    runner.logger.warning(message)


def _empty_beside_contents(key: str, old: dict, new: dict, changed: list[str]) -> bool:
    """Whether ``key`` is an empty container on one side and absent on the other while the
    keys inside it are named: ``custom_hooks (absent) -> []`` is no news next to
    ``custom_hooks.0.type 'X' -> (absent)``."""
    pair = (old.get(key, _ABSENT), new.get(key, _ABSENT))
    empty = any(isinstance(value, (list, tuple, dict)) and not value for value in pair)
    absent = any(value is _ABSENT for value in pair)
    return empty and absent and any(other.startswith(f"{key}.") for other in changed)


def _overridden_by(
    key: str, new: dict, optimizer: bool, schedulers: bool, data_seed: int | None
) -> str | None:
    """Why the restored state overrides the changed ``key`` (None: the new value is used)."""
    if (optimizer and _OPTIMIZER_KEYS.match(key)) or (schedulers and _SCHEDULER_KEYS.match(key)):
        return (
            "a resume restores the optimizer and the parameter schedulers as saved: exact "
            "resume, as in MMEngine"
        )
    if key == _SAMPLER_SEED and data_seed is not None and new.get(key, _ABSENT) != data_seed:
        return (
            f"the data order goes on with the checkpoint's sampler seed, {data_seed}, so that "
            "the resumed epochs read what the unbroken run's would"
        )
    return None


def _listed(keys: list[str], old: dict, new: dict) -> str:
    """``key old -> new`` of the first :data:`_SHOWN` keys, and how many more."""
    shown = ", ".join(
        f"{key} {_short(old.get(key, _ABSENT))} -> {_short(new.get(key, _ABSENT))}"
        for key in keys[:_SHOWN]
    )
    return shown + more_than(_SHOWN, len(keys))


class _Code(str):
    """A config value that is not plain data, kept as its source text."""

    def __repr__(self) -> str:
        return str(self)


class _Absent:
    """A key one of the configs lacks."""

    def __repr__(self) -> str:
        return "(absent)"


_ABSENT = _Absent()


def _config_values(text: str) -> dict | None:
    """The top-level keys of a config written as Python (``Config.pretty_text``, MMEngine's
    too) and their values, read without running the text: literals and ``dict(...)`` calls
    as values, anything else as its source text. None when the text is not Python."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None
    values = {}
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            target = statement.targets[0]
            if isinstance(target, ast.Name):
                values[target.id] = _value(statement.value)
            elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                values[str(target.slice.value)] = _value(statement.value)  # globals()['a-b']
    return values


def _value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if _is_dict_call(node):  # dict(a=1, ...), as configs write dicts
        return {keyword.arg: _value(keyword.value) for keyword in node.keywords}  # type: ignore[attr-defined]
    if isinstance(node, ast.Dict) and all(isinstance(key, ast.Constant) for key in node.keys):
        return {key.value: _value(item) for key, item in zip(node.keys, node.values)}  # type: ignore[union-attr]
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(item) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    return _Code(ast.unparse(node))


def _is_dict_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and not node.args
        and all(keyword.arg for keyword in node.keywords)
    )


def _leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key path, value) of every value in a config, through dicts and lists of dicts
    (``param_scheduler.1.end``, as ``--cfg-options`` writes it)."""
    if isinstance(value, dict) and value:
        items: Any = value.items()
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, dict) for v in value):
        items = enumerate(value)
    else:
        yield prefix, value
        return
    for key, item in items:
        yield from _leaves(item, f"{prefix}.{key}" if prefix else str(key))


def _short(value: Any, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else f"{text[: width - 3]}..."
