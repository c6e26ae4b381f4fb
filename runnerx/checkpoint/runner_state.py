"""What a Runner puts into a checkpoint and takes back from one (MMEngine's layout).

A checkpoint is a dict with ``meta`` (epoch, iter, seed, experiment name, config text,
versions, time), ``state_dict`` (the model), ``optimizer``, ``param_schedulers`` and
``message_hub``, so tools that read MMEngine checkpoints read these too; runnerx adds the data
position, random states and the states of hooks with ``state_dict()`` (``hook_states``).
"""

from __future__ import annotations

import contextlib
import inspect
import os
import time
from collections.abc import Iterator
from typing import Any

import torch

from runnerx.dist import all_gather_object
from runnerx.fileio import atomic_write, wait_for_pending_writes
from runnerx.fileio.atomic import queued_by
from runnerx.logging.log_processor import losses_averaged_over_ranks
from runnerx.parallel import (
    load_optimizer_state_dict,
    load_sharded_checkpoint,
    model_state_dict,
    optimizer_state_dict,
    save_sharded_checkpoint,
    saves_sharded,
)
from runnerx.runner.environment import capture_rng_state, restore_rng_state
from runnerx.suggest import counted
from runnerx.version import __version__

from .config_changes import warn_of_config_changes
from .diverged_weights import warn_if_diverged
from .ema_weights import resume_training_weights
from .hook_states import CHECKPOINT_KEY as HOOK_STATES_KEY
from .hook_states import hook_states, restore_hook_states
from .io import load_checkpoint, load_model_weights, save_checkpoint, verify_checkpoint
from .loader import CheckpointLoader
from .mmengine_compat import convert_mmengine_message_hub
from .resume_checks import (
    check_same_optimizer,
    follow_copied_work_dir,
    in_work_dir,
    model_mismatch,
    no_weights_of,
    resumed_line,
    warn_if_nothing_left,
    warn_of_restored_schedule_ends,
    warn_without_training_state,
)
from .url_errors import download_errors_named
from .work_dir_checkpoints import missing_last_checkpoint, newest_best_checkpoint, resume_from_best


def runner_checkpoint(
    runner: Any,
    save_optimizer: bool = True,
    save_param_scheduler: bool = True,
    meta: dict | None = None,
    by_epoch: bool = True,
    with_model: bool = True,
) -> dict:
    """The checkpoint dict of ``runner`` at this point of training (``with_model=False``:
    without the model and optimizer state, which a sharded checkpoint keeps in shards)."""
    # Called from after_train_epoch / after_train_iter, before the loop counts that step.
    epoch, step = (runner.epoch + 1, runner.iter) if by_epoch else (runner.epoch, runner.iter + 1)
    full_meta = {
        "epoch": epoch,
        "iter": step,
        "seed": runner.seed,
        "experiment_name": runner.experiment_name,
        "time": time.strftime("%Y%m%d_%H%M%S", time.localtime()),
        "runnerx_version": __version__,
        "torch_version": str(torch.__version__),
        "cfg": getattr(runner, "cfg_text", None) or "",
        # where validation last began: a resume runs one this checkpoint missed
        "validated_at": getattr(runner.train_loop, "validated_at", 0),
        **(meta or {}),
    }
    dataset_meta = _dataset_meta(runner)
    if dataset_meta is not None:  # MMEngine's key: inference code reads the class names here
        full_meta.setdefault("dataset_meta", dataset_meta)
    checkpoint: dict[str, Any] = {"meta": full_meta}
    unbuilt = _unbuilt_training_state(runner, save_optimizer, save_param_scheduler)
    if unbuilt:
        save_optimizer = save_optimizer and "optim_wrapper" not in unbuilt
        save_param_scheduler = save_param_scheduler and "param_scheduler" not in unbuilt
        runner.logger.warning(
            f"save_checkpoint: {' and '.join(unbuilt)} "
            f"{'is still a config' if len(unbuilt) == 1 else 'are still configs'} (train() "
            "builds them), so this checkpoint holds no state of them; save after training "
            "starts, or pass save_optimizer=False / save_param_scheduler=False to leave them out"
        )
    if with_model:
        # full tensors on the CPU whatever the wrapper (under FSDP gathered to rank 0)
        checkpoint["state_dict"] = model_state_dict(runner.model)
    # every rank gets here (also for a sharded save): the losses' histories are averaged
    checkpoint["message_hub"] = losses_averaged_over_ranks(runner.message_hub.state_dict())
    optim_wrapper = runner.optim_wrapper
    if with_model and save_optimizer and _saves_state(optim_wrapper):
        checkpoint["optimizer"] = optimizer_state_dict(runner.model, optim_wrapper)
    loop = runner.train_loop
    if hasattr(loop, "data_position"):  # a loop of runnerx's; one of the user's has none
        checkpoint["dataloader"] = loop.data_position(full_meta["iter"])
    checkpoint["rng_states"] = all_gather_object(capture_rng_state())
    states = hook_states(runner.hooks)  # before the hooks' before_save_checkpoint, as Lightning
    if states:
        checkpoint[HOOK_STATES_KEY] = states
    if save_param_scheduler and runner.param_schedulers:
        checkpoint["param_schedulers"] = map_schedulers(
            runner.param_schedulers, lambda s: s.state_dict()
        )
    return checkpoint


def save_runner_checkpoint(
    runner: Any, out_dir: str, filename: str, background: bool = False, **kwargs: Any
) -> str:
    """Let hooks add to the checkpoint, then write it atomically on rank 0 (or, when the
    strategy asks for sharded checkpoints, as a folder every rank writes to); return its path.
    ``background``: return once the checkpoint is serialised, leaving the rest of the write
    to the writer thread (else once the file is complete)."""
    sharded = saves_sharded(runner.model)
    checkpoint = runner_checkpoint(runner, with_model=not sharded, **kwargs)
    runner.call_hook("before_save_checkpoint", checkpoint=checkpoint)
    path = os.path.join(out_dir, filename)
    if sharded:
        save_optimizer = kwargs.get("save_optimizer", True) and _saves_state(runner.optim_wrapper)
        optim_wrapper = runner.optim_wrapper if save_optimizer else None
        save_sharded_checkpoint(path, runner.model, optim_wrapper, extra=checkpoint)
    elif runner.rank == 0:
        save_checkpoint(checkpoint, path, background=background)
    return path


def save_in_background(runner: Any, out_dir: str, filename: str, **kwargs: Any) -> str:
    """``runner.save_checkpoint(out_dir, filename, **kwargs)`` for CheckpointHook, the file's
    fsync and rename left to the writer thread (what must follow it is queued with
    ``after_pending_writes``); a Runner subclass's own ``save_checkpoint`` with MMEngine's
    arguments only is called without ``background``, and writes in the foreground. What it
    queues is ``runner``'s (see :func:`runnerx.fileio.atomic.queued_by`)."""
    save = runner.save_checkpoint
    parameters = inspect.signature(save).parameters.values()
    if any(p.name == "background" or p.kind is p.VAR_KEYWORD for p in parameters):
        kwargs["background"] = True
    with queued_by(runner):
        return save(out_dir, filename, **kwargs)


def _dataset_meta(runner: Any) -> dict | None:
    """The training dataset's ``metainfo`` when it is plain data (what a safe load reads
    back), else None."""
    # a test-only Runner has no train_loop
    dataset = getattr(getattr(runner.train_loop, "dataloader", None), "dataset", None)
    metainfo = getattr(dataset, "metainfo", None)
    return dict(metainfo) if isinstance(metainfo, dict) and _plain(metainfo) else None


def _plain(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(key, str) and _plain(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return all(_plain(item) for item in value)
    return value is None or isinstance(value, (str, int, float, bool))


def _saves_state(optim_wrapper: Any) -> bool:
    return optim_wrapper is not None and hasattr(optim_wrapper, "state_dict")


def _unbuilt_training_state(runner: Any, save_optimizer: bool, save_schedulers: bool) -> list:
    """The config keys among ``optim_wrapper`` and ``param_scheduler`` whose state a save
    asked for but which are still configs: a Runner builds them when training starts."""
    unbuilt = []
    if save_optimizer and isinstance(runner.optim_wrapper, dict):
        unbuilt.append("optim_wrapper")
    schedulers = runner.param_schedulers
    if save_schedulers and schedulers:
        if isinstance(schedulers, dict) and all(isinstance(g, list) for g in schedulers.values()):
            schedulers = [s for group in schedulers.values() for s in group]  # one per optimizer
        elif not isinstance(schedulers, list):
            schedulers = [schedulers]  # one scheduler's config
        if not all(hasattr(s, "state_dict") for s in schedulers):
            unbuilt.append("param_scheduler")
    return unbuilt


def resume_runner(
    runner: Any,
    path: str,
    resume_optimizer: bool = True,
    resume_param_scheduler: bool = True,
    map_location: Any = "default",
) -> dict:
    """Restore weights, optimizer, schedulers, counters and logged history from ``path`` (a
    checkpoint file, read with ``map_location``, ``'default'`` meaning the CPU; or the folder
    of a sharded one, which each rank reads onto its own device)."""
    if os.path.isdir(path):  # sharded: model and optimizer are restored in place by all ranks
        optim_wrapper = runner.optim_wrapper if resume_optimizer else None
        checkpoint = load_sharded_checkpoint(path, runner.model, optim_wrapper)
        resume_optimizer = False
        runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
    else:
        location = "cpu" if map_location == "default" else map_location
        if os.path.isfile(path):  # a URL is read by load_checkpoint's download
            verify_checkpoint(
                path,
                "resume from another checkpoint, e.g. an earlier one of the work dir "
                "(resume='<checkpoint>')",
            )
        checkpoint = load_checkpoint(path, location, unsafe_load=runner.unsafe_load)
        saved_weights = dict(checkpoint.get("state_dict") or {})
        # Hooks see the checkpoint before the weights are taken from it (EMAHook swaps them).
        runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
        resume_training_weights(runner, checkpoint, path, saved_weights)
        try:
            load_model_weights(runner.model, checkpoint, strict=True)
        except RuntimeError as error:  # torch's own message names neither the key nor a cure
            mismatch = model_mismatch(runner.model, checkpoint, path)
            if mismatch is None:
                raise
            raise RuntimeError(mismatch) from error
    restore_hook_states(runner, checkpoint, path)  # after after_load_checkpoint, as Lightning
    warn_if_diverged(runner, path, checkpoint, resuming=True)
    meta = checkpoint.get("meta", {})
    if "dataset_meta" in meta and meta["dataset_meta"] != _dataset_meta(runner):
        runner.logger.warning(
            "the training dataset's metainfo differs from the one the checkpoint was trained "
            f"on ({path}); check that the checkpoint and the dataset belong together"
        )
    _continue_seed(runner, meta.get("seed"), path)
    loop = runner.train_loop
    loop._epoch = int(meta.get("epoch", 0))
    loop._iter = int(meta.get("iter", 0))
    warn_if_nothing_left(runner, path)
    if "dataloader" in checkpoint and hasattr(loop, "resume_data_position"):
        position = dict(checkpoint["dataloader"])
        if checkpoint.get("rng_states"):  # an older runnerx's lacks the world size: one per rank
            position.setdefault("world_size", len(checkpoint["rng_states"]))
        loop.resume_data_position(position)
    elif hasattr(loop, "resume_without_position"):  # MMEngine's: continue where it would
        seed = None if runner._randomness_cfg.get("diff_rank_seed") else meta.get("seed")
        note = loop.resume_without_position(seed if isinstance(seed, int) else None)
        if note:
            runner.logger.info(
                f"resume: {path} holds no data position (an MMEngine or weights-only "
                f"checkpoint): {note}"
            )
    if "validated_at" in meta and hasattr(loop, "resume_validation"):
        loop.resume_validation(int(meta["validated_at"]))
    _restore_rng(runner, checkpoint.get("rng_states"))
    optim_wrapper = runner.optim_wrapper
    warn_without_training_state(runner, path, checkpoint, resume_optimizer, resume_param_scheduler)
    optimizer_restored = (resume_optimizer and "optimizer" in checkpoint) or os.path.isdir(path)
    schedulers_restored = resume_param_scheduler and "param_schedulers" in checkpoint
    data_seed = checkpoint.get("dataloader", {}).get("seed")
    warn_of_config_changes(
        runner, path, meta.get("cfg"), optimizer_restored, schedulers_restored, data_seed
    )
    if resume_optimizer and "optimizer" in checkpoint and optim_wrapper is not None:
        state = checkpoint["optimizer"]
        if hasattr(optim_wrapper, "optimizer"):  # one optimizer (not an OptimWrapperDict)
            from runnerx.optim.mmengine_state import regroup_mmengine_state

            check_same_optimizer(state, optim_wrapper.optimizer, path)
            # an MMEngine run's one param group per parameter, matched by parameter name
            state = regroup_mmengine_state(
                state, optim_wrapper.param_groups, runner.unwrapped_model
            )
        load_optimizer_state_dict(runner.model, optim_wrapper, state)
        _warn_of_lr_scaled_for_other_ranks(runner, path, checkpoint)
    if resume_param_scheduler and "param_schedulers" in checkpoint and runner.param_schedulers:
        warn_of_restored_schedule_ends(runner, path, checkpoint["param_schedulers"])
        load_scheduler_states(runner.param_schedulers, checkpoint["param_schedulers"])
    if "message_hub" in checkpoint:
        runner.message_hub.load_state_dict(convert_mmengine_message_hub(checkpoint["message_hub"]))
        follow_copied_work_dir(runner, path)
    runner.logger.info(resumed_line(loop, path, checkpoint.get("dataloader")))
    return checkpoint


def load_runner_weights(
    runner: Any, path: str, strict: bool, revise_keys: Any, map_location: Any = "cpu"
) -> dict:
    """Load model weights only (``load_from``), after the hooks' ``after_load_checkpoint``
    (MMEngine's order), and log which keys did not match and whether the weights are NaN."""
    if os.path.isdir(path):  # a sharded checkpoint: every rank loads its part, all keys
        checkpoint = load_sharded_checkpoint(path, runner.model)
        runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
        runner.logger.info(f"loaded weights from the sharded checkpoint {path}")
        warn_if_diverged(runner, path, checkpoint, resuming=False)
        return checkpoint
    if os.path.isfile(path):  # a URL or a store's name is fetched by the loader
        verify_checkpoint(path, "load_from another copy of it or another checkpoint")
    # a path, an http(s) URL or a store's name; unsafe only for a run that opted in
    checkpoint = CheckpointLoader.load_checkpoint(
        path, map_location=map_location, unsafe_load=runner.unsafe_load
    )
    # as in MMEngine, hooks see the checkpoint before the weights are taken from it (EMAHook
    # starts its average from them)
    runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
    target = _weights_target(runner.unwrapped_model)
    refuse = None
    if getattr(runner, "_loading_to_evaluate", False):
        refuse = (
            f"load_from: {path} does not fit this config's model, so the evaluation would run "
            "on weights left as initialised (give a checkpoint of this config's model, or the "
            "config that trained it; to fine-tune from it, train with load_from, which skips "
            "tensors of another shape)"
        )
    missing, unexpected = load_model_weights(
        target, checkpoint, strict, revise_keys, refuse_other_shapes=refuse
    )
    expected = len(target.state_dict())
    if expected and len(missing) == expected:
        raise ValueError(no_weights_of(target, path, checkpoint, revise_keys))
    runner.logger.info(f"loaded weights from {path}")
    if missing:
        runner.logger.warning(f"missing keys in the checkpoint {path}: {', '.join(missing)}")
    if unexpected:
        runner.logger.warning(f"unexpected keys in the checkpoint {path}: {', '.join(unexpected)}")
    warn_if_diverged(runner, path, checkpoint, resuming=False)
    return checkpoint


def _weights_target(model: Any) -> Any:
    """The model ``load_from`` weights are for: a test-time augmentation wrapper's ``module``
    (the checkpoint is the plain model's, as in MMEngine), else ``model``."""
    from runnerx.model import BaseTTAModel

    return model.module if isinstance(model, BaseTTAModel) else model


def load_or_resume(runner: Any, resume: bool | str, load_from: str | None) -> None:
    """As MMEngine decides: ``resume=True`` with ``load_from`` resumes from ``load_from``,
    without it from the newest checkpoint of the work dir (or starts, when there is none);
    ``resume='path'`` resumes from that file (``'auto'``, OpenMMLab's ``--resume`` word, means
    True; ``'last'``, Lightning's ``ckpt_path`` word, too, but there must be a checkpoint, as
    with ``tools/train.py --resume last``; a file of either name wins); otherwise
    ``load_from`` loads weights only. (``tools/train.py --resume`` clears ``load_from``, as
    OpenMMLab's tools do.) A missing file's error starts with the key that named it."""
    # a checkpoint this process is still finishing counts; another Runner's failed write
    # (a hook called by hand) is logged, not raised here
    wait_for_pending_writes(owner=runner)
    must_find = resume == "last" and not os.path.exists(resume)
    if must_find or (resume == "auto" and not os.path.exists(resume)):
        resume = True
    if resume:
        if isinstance(resume, str):
            path = resume
        else:
            path = load_from or find_latest_checkpoint(runner.work_dir)
            if path and not load_from and "://" not in path and not os.path.exists(path):
                raise FileNotFoundError(missing_last_checkpoint(runner.work_dir, path))
        if path:
            with _named_by("resume" if isinstance(resume, str) or not load_from else "load_from"):
                runner.resume(path)
            return
        best = newest_best_checkpoint(str(runner.work_dir))
        if must_find:
            found = (
                f"; the newest best checkpoint is {best}: {resume_from_best(best)}" if best else ""
            )
            raise FileNotFoundError(
                f"resume='last': {runner.work_dir} has no last_checkpoint file (no run saved a "
                f"periodic checkpoint there){found}; resume=True or 'auto' starts from the "
                "beginning when there is none"
            )
        if best is None:
            runner.logger.info(
                f"resume=True but {runner.work_dir} has no checkpoint yet: training starts "
                "from the beginning"
            )
        else:  # a run stopped before its first periodic save: say what it left
            runner.logger.warning(
                f"resume=True but {runner.work_dir} has no last_checkpoint file (its run saved "
                f"only best checkpoints, save_best): training starts from the beginning; the "
                f"newest best checkpoint is {best}: {resume_from_best(best)}"
            )
    elif load_from:
        with _named_by("load_from"):
            runner.load_checkpoint(load_from)


@contextlib.contextmanager
def _named_by(key: str) -> Iterator[None]:
    """A missing checkpoint file, or a URL that cannot be fetched, is reported with the
    config key that named it."""
    try:
        with download_errors_named(key):
            yield
    except FileNotFoundError as err:
        raise FileNotFoundError(f"{key}: {err}") from err


def _continue_seed(runner: Any, saved: Any, path: str) -> None:
    """Carry on with the interrupted run's seed (its rank-0 value in ``meta['seed']`` of the
    checkpoint at ``path``), as MMEngine does: later checkpoints record it, and the data order
    follows it (the sampler takes its seed from the checkpoint's data position)."""
    if not isinstance(saved, int):
        return
    configured = runner._randomness_cfg.get("seed")
    rank_offset = runner.rank if runner._randomness_cfg.get("diff_rank_seed") else 0
    if runner.seed - rank_offset == saved:
        return
    if configured is not None:
        runner.logger.warning(
            f"randomness.seed is {configured} but the checkpoint was trained with seed "
            f"{saved}: the resumed run continues with {saved}, as its random states and data "
            f"order are restored (exact resume); to train with seed {configured}, start a new "
            f"run from these weights: load_from='{path}' and resume=False"
        )
    else:  # the start-up log showed the seed drawn for this process
        runner.logger.info(
            f"randomness.seed is None: the resumed run continues with the checkpoint's seed "
            f"{saved}, not the one drawn at start-up ({runner.seed - rank_offset})"
        )
    runner.seed = saved + rank_offset
    runner._randomness_cfg["seed"] = saved


def _warn_of_lr_scaled_for_other_ranks(runner: Any, path: str, checkpoint: dict) -> None:
    """With ``auto_scale_lr`` on, a checkpoint of another number of ranks holds an lr scaled
    for another batch: the restored optimizer keeps it (exact resume, as in MMEngine), so
    say so, and how to train at this run's scale instead."""
    scale = getattr(runner, "auto_scale_lr", None)
    if not (isinstance(scale, dict) and scale.get("enable")):
        return
    saved = checkpoint.get("dataloader", {}).get("world_size") or len(
        checkpoint.get("rng_states") or ()
    )
    if not saved or saved == runner.world_size:
        return
    runner.logger.warning(
        f"resume: auto_scale_lr is on and {path} was saved by a run of "
        f"{counted(saved, 'rank')}, this one has {runner.world_size}: the optimizer keeps the "
        f"lr the checkpoint's run scaled for {saved} x train_dataloader.batch_size samples "
        "per iteration (resuming is exact, as in MMEngine); to train at the lr scaled for "
        f"this run's batch, start a new run from these weights: load_from='{path}' and "
        "resume=False"
    )


def _restore_rng(runner: Any, states: list | None) -> None:
    """Each rank continues its own random stream (rank 0's when the world size changed)."""
    if not states:
        return
    if len(states) != runner.world_size:
        runner.logger.warning(
            f"the checkpoint holds random states of {counted(len(states), 'rank')} but this "
            f"run has {runner.world_size}: every rank continues rank 0's, so the run will not "
            "repeat the interrupted one exactly"
        )
    restore_rng_state(states[runner.rank] if len(states) == runner.world_size else states[0])


def map_schedulers(schedulers: Any, function: Any) -> Any:
    """``function`` of each scheduler, in the shape ``schedulers`` has: a list, or a dict of
    lists (one per optimizer of an OptimWrapperDict)."""
    if isinstance(schedulers, dict):
        return {name: [function(s) for s in group] for name, group in schedulers.items()}
    return [function(s) for s in schedulers]


def load_scheduler_states(schedulers: Any, states: Any) -> None:
    """Load the states :func:`map_schedulers` saved into ``schedulers`` (the same shape)."""
    if isinstance(schedulers, dict):
        for name, group in schedulers.items():
            for scheduler, state in zip(group, states[name]):
                scheduler.load_state_dict(state)
    else:
        for scheduler, state in zip(schedulers, states):
            scheduler.load_state_dict(state)


def find_latest_checkpoint(path: str) -> str | None:
    """The checkpoint named in ``<path>/last_checkpoint``, if that file exists (MMEngine's
    function; ``path`` is the work dir). It holds an absolute path; when that lies outside the
    work dir, in one that was copied or moved, the work dir's own file of that name is meant
    (logged; see :func:`~runnerx.checkpoint.resume_checks.in_work_dir`)."""
    pointer = os.path.join(path, "last_checkpoint")
    if not os.path.isfile(pointer):
        return None
    with open(pointer, encoding="utf-8") as file:
        named = file.read().strip()
    return in_work_dir(path, named) if named else None


def point_last_checkpoint(work_dir: str, path: str) -> None:
    """Name ``path`` in ``work_dir/last_checkpoint`` (what ``resume=True`` reads), atomically;
    call it once the checkpoint is complete."""
    with atomic_write(os.path.join(work_dir, "last_checkpoint")) as file:
        file.write(path)
