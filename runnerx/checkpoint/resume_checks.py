"""What a resume checks and tells the user: the config that changed since the checkpoint, a
schedule with nothing left to train, a model that does not match, a checkpoint without the
training state or of another optimizer, and a ``last_checkpoint`` file that names a file in
another work dir (a copied one); :mod:`~runnerx.checkpoint.work_dir_checkpoints` says what a
work dir holds when it names none.

Resuming is exact, as in MMEngine: weights, optimizer, schedulers and counters continue as
saved, so a changed learning rate in the config is not used; these checks say so instead of
resuming silently.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from typing import Any

#: Keys a resumed run is expected to change: where it runs and from what, and a schedule
#: extended to train on (checked by :func:`warn_if_nothing_left`); ``randomness.seed`` has
#: its own warning. Prefixes of dotted key paths.
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
_SHOWN = 8  # changed keys named in the warning


def warn_of_config_changes(
    runner: Any, path: str, saved_text: Any, optimizer: bool, schedulers: bool
) -> None:
    """Log one warning naming the keys whose values differ between the config the checkpoint
    at ``path`` was saved with (``meta['cfg']``, its text) and this run's, leaving out
    :data:`EXPECTED_CHANGES`; for the optimizer's and the schedulers' keys (when their state,
    ``optimizer`` / ``schedulers``, was restored) it says the saved state wins and how to
    start from the weights instead. The texts are read as data, never run."""
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
    ]
    if not changed:
        return
    shown = ", ".join(
        f"{key} {_short(old.get(key, _ABSENT))} -> {_short(new.get(key, _ABSENT))}"
        for key in changed[:_SHOWN]
    )
    more = f" (and {len(changed) - _SHOWN} more)" if len(changed) > _SHOWN else ""
    message = f"resume: the config differs from the one {path} was saved with: {shown}{more}"
    overridden = [
        key
        for key in changed
        if (optimizer and _OPTIMIZER_KEYS.match(key)) or (schedulers and _SCHEDULER_KEYS.match(key))
    ]
    if overridden:
        message += (
            f". Not used: {', '.join(overridden[:_SHOWN])}, since a resume restores the optimizer "
            "and the parameter schedulers as saved (exact resume, as in MMEngine); to train "
            f"with the new values, start a new run from these weights: load_from='{path}' and "
            "resume=False"
        )
    runner.logger.warning(message)


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


def warn_if_nothing_left(runner: Any, path: str) -> None:
    """Say so when the resumed counters already reach ``train_cfg.max_epochs`` (or
    ``max_iters``): the run then only ends (after a validation the checkpoint missed, if
    any), as MMEngine's does, which looks like a finished training otherwise."""
    loop = runner.train_loop
    unit = getattr(loop, "unit", None)  # a loop of runnerx's (or a subclass of one)
    if unit is None:
        return
    key, done = ("max_iters", loop.iter) if unit == "iteration" else ("max_epochs", loop.epoch)
    total = getattr(loop, key, None)
    if isinstance(total, int) and done >= total:
        runner.logger.warning(
            f"resume: train_cfg.{key}={total} but {path} is at {unit} {done}: nothing left to "
            f"train; raise train_cfg.{key} to train on"
        )


def model_mismatch(model: Any, checkpoint: dict, path: str) -> str | None:
    """Why the weights of ``checkpoint`` do not fit ``model`` for a strict load (missing,
    unexpected and other-shaped names, a few of each), with the cure; None when they fit."""
    from runnerx.parallel import unwrap

    expected = unwrap(model).state_dict()
    state = checkpoint.get("state_dict", checkpoint)
    state = {re.sub(r"^module\.", "", key): value for key, value in state.items()}
    groups = {
        "missing": [key for key in expected if key not in state],
        "unexpected": [key for key in state if key not in expected],
        "of another shape": [
            key
            for key, value in state.items()
            if key in expected
            and hasattr(value, "shape")
            and tuple(value.shape) != tuple(expected[key].shape)
        ],
    }
    found = [
        f"{what}: {', '.join(names[:_SHOWN])}"
        + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
        for what, names in groups.items()
        if names
    ]
    if not found:
        return None
    return (
        f"resume: the model does not match the checkpoint {path} ({'; '.join(found)}): "
        "resuming needs the model the checkpoint was saved from; to start the changed model "
        f"from these weights, set load_from='{path}' and resume=False (it loads the weights "
        "that fit and names the rest)"
    )


def warn_without_training_state(
    runner: Any, path: str, checkpoint: dict, optimizer: bool, schedulers: bool
) -> None:
    """A weights-only checkpoint (published, or a sharded one's extras aside) resumes the
    counters but starts the optimizer and the schedule over: say so."""
    if os.path.isdir(path):  # a sharded checkpoint restores the optimizer in place
        optimizer = False
    wanted = [
        ("optimizer", optimizer and runner.optim_wrapper is not None),
        ("param_schedulers", schedulers and bool(runner.param_schedulers)),
    ]
    lacking = [name for name, needed in wanted if needed and name not in checkpoint]
    if lacking:
        runner.logger.warning(
            f"resume: {path} has no {' or '.join(lacking)} state (a published or weights-only "
            f"checkpoint), so they start over at epoch {runner.train_loop.epoch}, iteration "
            f"{runner.train_loop.iter}; give a training checkpoint to resume exactly, or set "
            "load_from to this one with resume=False to start a new run from its weights"
        )


def check_same_optimizer(state: dict, optimizer: Any, path: str) -> None:
    """Refuse optimizer state saved by another kind of optimizer (SGD's for AdamW would fail
    later, deep inside its step): the saved hyperparameters the current one lacks tell."""
    saved_groups, groups = state.get("param_groups") or [], optimizer.param_groups
    if not saved_groups or not groups:
        return
    foreign = sorted(set(saved_groups[0]) - set(groups[0]) - {"params", "initial_lr"})
    if foreign:
        raise ValueError(
            f"resume: the optimizer state in {path} has {', '.join(foreign)}, which "
            f"{type(optimizer).__name__} does not: it was saved by another optimizer type. "
            "Resume with the optimizer of that run, or start from these weights with a new "
            "optimizer: load_from=<the checkpoint> and resume=False"
        )


def same_name_in(folder: str, path: str) -> str | None:
    """The file (or sharded checkpoint's folder) of ``path``'s name in ``folder``, if there is
    one: what a recorded absolute checkpoint path means in a copied or moved work dir."""
    local = os.path.join(folder, os.path.basename(os.path.normpath(path)))
    return local if os.path.exists(local) else None


def in_work_dir(work_dir: str, named: str) -> str:
    """The checkpoint ``work_dir/last_checkpoint`` means when it names ``named``: ``named``,
    or the work dir's file of that name when ``named`` lies outside the work dir and is gone
    or sits in another work dir (one with its own ``last_checkpoint``): the work dir was
    copied or moved, and ``last_checkpoint`` holds the absolute path MMEngine writes. (A
    checkpoint in ``CheckpointHook``'s ``out_dir`` has no such neighbour, so it is kept.)"""
    folder = os.path.dirname(os.path.abspath(named))
    local = same_name_in(work_dir, named)
    if folder == os.path.abspath(work_dir) or "://" in named or local is None:
        return named
    if os.path.exists(named) and not os.path.isfile(os.path.join(folder, "last_checkpoint")):
        return named
    if (work_dir, named) not in _TOLD:  # asked again by CheckpointHook: said once
        _TOLD.add((work_dir, named))
        from runnerx.logging import print_log

        print_log(
            f"{work_dir}/last_checkpoint names {named}, outside this work dir (copied or "
            f"moved?): taken to mean this work dir's {local}",
            logger="current",
        )
    return local


_TOLD: set[tuple[str, str]] = set()


def follow_copied_work_dir(runner: Any, path: str) -> None:
    """After a resume from ``path``: when it is the work dir's copy of the checkpoint the
    restored history names as the last one (``last_ckpt``, a path in the work dir it was
    copied from), name the copy instead, so that the history points into this work dir."""
    last = runner.message_hub.get_info("last_ckpt")
    local = os.path.join(runner.work_dir, os.path.basename(path))
    same_name = isinstance(last, str) and os.path.basename(last) == os.path.basename(path)
    if same_name and last != local and os.path.abspath(path) == os.path.abspath(local):
        runner.message_hub.update_info("last_ckpt", local)
