"""What a resume checks and tells the user: where training continues, a schedule with
nothing left to train, a model that does not match, a checkpoint without the training state
or of another optimizer, and a ``last_checkpoint`` file that names a file in another work
dir (a copied one); :mod:`~runnerx.checkpoint.work_dir_checkpoints` says what a work dir
holds when it names none.

Resuming is exact, as in MMEngine: weights, optimizer, schedulers and counters continue as
saved; these checks say what that means instead of resuming silently
(:mod:`~runnerx.checkpoint.config_changes` compares the configs).
"""

from __future__ import annotations

import os
import re
from typing import Any

from runnerx.data.build import length_of
from runnerx.suggest import counted, more_than

_SHOWN = 8  # names of each kind in a message


def resumed_line(loop: Any, path: str, position: dict | None = None) -> str:
    """The line a resume from ``path`` logs, in the terms of the training log that follows
    (``Epoch(train) [2][8/23]``, ``Iter(train) [31/92]``): the iterations done and where
    training continues, e.g. ``resumed from .../iter_30.pth: 30 iterations done, epoch 2
    continues at batch 8 of 23``. Call it once the loop knows the batches it skips;
    ``position`` is the checkpoint's data position (an epoch it had begun and the loop
    starts over is told so)."""
    unit = getattr(loop, "unit", None)  # a loop of runnerx's (or a subclass of one)
    if unit is None:
        return f"resumed from {path} at epoch {loop.epoch}, iter {loop.iter}"
    done = counted(loop.iter, "iteration")
    if unit == "iteration":
        if loop.iter >= loop.max_iters:
            return f"resumed from {path}: {done} done, nothing left to train"
        where = f"continues at iteration {loop.iter + 1} of {loop.max_iters}"
        return f"resumed from {path}: {done} done, {where}"
    # the batches of this epoch a resume skips (the loop's, set by resume_data_position)
    skip = getattr(loop, "resume_batches", 0)
    begun = bool(position and position.get("epoch") == loop.epoch and position.get("batches"))
    epoch, length = loop.epoch + 1, length_of(loop.dataloader)
    if not begun:
        done = f"{counted(loop.epoch, 'epoch')} ({done})"
    if loop.epoch >= loop.max_epochs:
        where = "nothing left to train"
    elif not skip:
        where = f"epoch {epoch} starts over" if begun else f"epoch {epoch} starts"
    elif length is not None and skip >= length:  # saved after the epoch's last iteration
        where = f"epoch {epoch} ends (its {length} batches are done)"
    else:
        where = f"epoch {epoch} continues at batch {skip + 1}" + (
            "" if length is None else f" of {length}"
        )
    return f"resumed from {path}: {done} done, {where}"


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


def warn_of_restored_schedule_ends(runner: Any, path: str, saved: Any) -> None:
    """Before the scheduler states ``saved`` in ``path`` are loaded: name each scheduler whose
    restored ``end`` differs from the one this run's config builds, typically an ``end``
    that defaulted to ``train_cfg.max_iters`` (``max_epochs``) and a run resumed with a
    longer one. The restored end wins (exact resume, as in MMEngine), so such a schedule
    stops early and its value stays put for the rest of the run, or never finishes."""
    moved = [
        (label, scheduler, state["end"])
        for label, scheduler, state in _scheduler_pairs(runner.param_schedulers, saved)
        if isinstance(state, dict)
        and state.get("end") is not None
        and getattr(scheduler, "end", None) is not None
        and state["end"] != scheduler.end
    ]
    if not moved:
        return
    loop = runner.train_loop
    names = []
    for label, scheduler, end in moved[:_SHOWN]:
        by_epoch = getattr(scheduler, "by_epoch", False)
        unit = "epoch" if by_epoch else "iteration"
        length = getattr(loop, "max_epochs" if by_epoch else "max_iters", None)
        effect = ""
        if isinstance(length, int) and end < length:
            param = getattr(scheduler, "param_name", "value")
            effect = f": its {param} stays at its last value after that"
        elif isinstance(length, int) and end > length:
            effect = f": it does not finish by the end of this run ({unit} {length})"
        names.append(
            f"{label} ({type(scheduler).__name__}) ends at {unit} {end} as restored, "
            f"{scheduler.end} as configured now{effect}"
        )
    more = more_than(_SHOWN, len(moved))
    runner.logger.warning(
        f"resume: {'; '.join(names)}{more}. The schedulers restored from {path} keep the "
        "ends of the run that saved it (as in MMEngine; an end left out of param_scheduler "
        "was that run's train_cfg.max_iters / max_epochs). To schedule the rest of the "
        "training anew, train it as a new run from these weights: load_from="
        f"'{path}', resume=False and a train_cfg of the iterations still to train (the "
        "optimizer's state and the schedules start over)"
    )


def _scheduler_pairs(schedulers: Any, saved: Any) -> list[tuple[str, Any, Any]]:
    """(label, built scheduler, its saved state) in the shape map_schedulers saved them: a
    list, or a dict of lists by optimizer name."""
    if isinstance(schedulers, dict) and isinstance(saved, dict):
        return [
            (f"param_scheduler[{name!r}][{index}]", scheduler, state)
            for name, group in schedulers.items()
            for index, (scheduler, state) in enumerate(zip(group, saved.get(name, ())))
        ]
    if isinstance(schedulers, list) and isinstance(saved, list):
        return [
            (f"param_scheduler[{index}]", scheduler, state)
            for index, (scheduler, state) in enumerate(zip(schedulers, saved))
        ]
    return []


def check_same_optimizer(state: dict, optimizer: Any, path: str) -> None:
    """Refuse optimizer state saved by another kind of optimizer (SGD's for AdamW would fail
    later, deep inside its step): a hyperparameter the current optimizer needs (one of its
    ``defaults``) that a saved param group lacks tells. Saved keys the current groups lack are
    fine, and kept: hooks and optimizer constructors add their own (mmyolo's
    ``initial_momentum``, ``lr_scale``, mmpretrain's ``fix_lr``)."""
    saved_groups, groups = state.get("param_groups") or [], optimizer.param_groups
    if not saved_groups or not groups:
        return
    needed = set(getattr(optimizer, "defaults", {})) - _BACKFILLED
    lacking = sorted({key for group in saved_groups for key in needed - set(group)})
    if not lacking:
        return
    name = type(optimizer).__name__
    foreign = sorted(
        key for key in set(saved_groups[0]) - set(groups[0]) if not key.startswith("initial_")
    )
    if foreign:
        found = f"has {', '.join(foreign)}, which {name} does not"
    else:
        found = f"lacks {', '.join(lacking)}, which {name} needs"
    raise ValueError(
        f"resume: the optimizer state in {path} {found}: it was saved by another optimizer "
        "type. Resume with the optimizer of that run, or start from these weights with a new "
        "optimizer: load_from=<the checkpoint> and resume=False"
    )


# flags torch's optimizers set to their default when they load a state saved without them
_BACKFILLED = {
    "foreach",
    "maximize",
    "capturable",
    "differentiable",
    "fused",
    "decoupled_weight_decay",
}


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


def no_weights_of(model: Any, path: str, checkpoint: Any, revise_keys: Any) -> str:
    """The error for a ``load_from`` checkpoint none of whose keys is one of ``model``'s: its
    entries, and, when its weights' keys share a first part that the model's lack (a
    ``model.`` of another framework), how to drop it."""
    name, count = type(model).__name__, len(model.state_dict())
    message = f"load_from: {path} holds no weights of {name} (none of its {count} keys is there"
    cure = "give a training checkpoint (with 'state_dict') or a model state_dict"
    weights = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, dict) else {}
    if not isinstance(weights, dict) or not weights:
        return f"{message}); {cure}"
    keys = [str(key) for key in weights]
    for pattern, replacement in revise_keys:  # as load_model_weights saw them
        keys = [re.sub(pattern, replacement, key) for key in keys]
    shown = ", ".join(keys[:4]) + (", ..." if len(keys) > 4 else "")
    label = "its weights' keys" if "state_dict" in checkpoint else "the checkpoint's entries"
    first = {key.split(".", 1)[0] for key in keys}
    if len(first) == 1 and "." in keys[0]:
        prefix, ours = f"{first.pop()}.", set(model.state_dict())
        if any(key[len(prefix) :] in ours for key in keys):
            return (
                f"{message}; {label} start with {prefix!r}: {shown}); drop it when loading: "
                f"runner.load_checkpoint(path, revise_keys=[(r'^module\\.', ''), "
                f"(r'^{re.escape(prefix)}', '')]), or save the weights without it"
            )
    return f"{message}; {label}: {shown}); {cure}"
