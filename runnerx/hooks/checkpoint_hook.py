"""CheckpointHook: saves checkpoints every few epochs or iterations, the last one, and the best."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runnerx.checkpoint.io import load_checkpoint, remove_partial_files
from runnerx.checkpoint.publish import strip_training_state, write_published
from runnerx.checkpoint.runner_state import (
    find_latest_checkpoint,
    point_last_checkpoint,
    save_in_background,
)
from runnerx.checkpoint.store_copies import CheckpointCopies
from runnerx.dist import is_main_process
from runnerx.fileio import LocalBackend, after_pending_writes, wait_for_pending_writes
from runnerx.fileio.atomic import queued_by
from runnerx.fileio.paths import backend_args_of
from runnerx.fileio.store_copies import out_dir_backend, require, store_path
from runnerx.hooks.best_checkpoints import (
    BestCheckpoints,
    best_rules,
    raise_if_a_save_failed,
    remove_checkpoint,
    upload_when_complete,
)
from runnerx.hooks.kept_checkpoints import (
    FINITE_CANDIDATE,
    LAST_FINITE_CKPT,
    KeptCheckpoints,
    vet_checkpoint,
)
from runnerx.hooks.metric_rule import (
    DEFAULT_GREATER_KEYS,
    DEFAULT_LESS_KEYS,
    TrainingValidationsHook,
    infer_rule,
)
from runnerx.logging import print_log
from runnerx.registry import HOOKS
from runnerx.suggest import refuse_unknown_keywords
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

#: MessageHub info: the file name of the checkpoint a stop (PreemptionHook) saved outside the
#: interval; with max_keep_ckpts > 0, the next periodic checkpoint replaces it
STOP_CKPT = "stop_ckpt"

#: Lightning's ModelCheckpoint arguments that runnerx names otherwise, and what they are here
LIGHTNING_ARGUMENTS = {
    "monitor": "save_best='<metric name>'",
    "mode": "rule ('min' is rule='less', 'max' rule='greater'; inferred from the metric's name "
    "when left out)",
    "save_top_k": "max_keep_best=k with save_best (the best k), or max_keep_ckpts=k without "
    "(the newest k)",
    "every_n_epochs": "interval=N (by_epoch=True)",
    "every_n_train_steps": "interval=N with by_epoch=False",
    "dirpath": "out_dir",
    "filename": "filename_tmpl='ckpt_{:03d}.pth'",
    "save_weights_only": "save_optimizer=False, save_param_scheduler=False",
    "verbose": "nothing: each save is logged",
}


@HOOKS.register_module()
class CheckpointHook(TrainingValidationsHook):
    """Saves ``epoch_{N}.pth`` / ``iter_{N}.pth`` through ``runner.save_checkpoint`` (a default
    hook, MMEngine's arguments)::

        default_hooks = dict(checkpoint=dict(
            type='CheckpointHook', interval=1, max_keep_ckpts=3, save_best='auto'))

    Every ``interval`` epochs (``by_epoch``) or iterations, counted from ``save_begin``, and at
    the end of training when ``save_last``. Files go to ``work_dir``, or to
    ``out_dir/<work_dir's name>``; ``work_dir/last_checkpoint`` names the newest one once it is
    written (what ``resume=True`` reads). With ``max_keep_ckpts > 0`` the oldest periodic
    checkpoint is removed after a newer one is complete, so that at most ``max_keep_ckpts`` are
    on disk while the losses are finite; once a training loss (or a saved weight) is NaN or
    inf, the last checkpoint saved before is kept too (``last_finite_ckpt``, which
    :class:`~runnerx.hooks.LoggerHook`'s warning names), and the checkpoint a stop saved
    (PreemptionHook: ``iter_<N>.pth``) goes with the next periodic one. ``save_best`` (a
    metric name, a list of them, or 'auto' for the first metric) keeps
    ``best_<metric>_<epoch|iter>_<N>.pth`` for the best value so far, by ``rule``
    ('greater'/'less', inferred from the name when left out; ``greater_keys``/``less_keys``
    replace the names it goes by, an empty list leaving none); when a new best is saved at a
    step whose periodic checkpoint was written before the validation, that checkpoint is
    written again so that it records the new best (as MMEngine; a step the interval did not
    save gets no periodic checkpoint, where MMEngine writes one).
    ``max_keep_best=k`` (runnerx's, Lightning's ``save_top_k``) keeps the k best of each metric
    instead of one (see :class:`~runnerx.hooks.best_checkpoints.BestCheckpoints`).
    ``published_keys`` (e.g. ``['meta', 'state_dict']``): after training, the last and best
    checkpoints are also written with only those entries as ``<name>-<sha256[:8]>.pth``.
    Temporary files that a crash left behind are removed when training starts.

    ``out_dir`` in another storage backend (``backend_args``, or MMEngine's deprecated
    ``file_client_args``, naming it, or a prefix registered with ``register_backend``)::

        checkpoint=dict(type='CheckpointHook', interval=1, out_dir='s3://bucket/exp')

    Unlike MMEngine, which writes there directly, every checkpoint is still written to the
    work dir as above (atomically, named in ``last_checkpoint``, what a resume reads) and,
    once complete, copied to ``out_dir/<work_dir's name>/`` by rank 0; ``max_keep_ckpts`` and
    a replaced best checkpoint remove the copy too.
    """

    priority = "VERY_LOW"
    _default_greater_keys = DEFAULT_GREATER_KEYS
    _default_less_keys = DEFAULT_LESS_KEYS

    def __init__(
        self,
        interval: int = -1,
        by_epoch: bool = True,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        out_dir: str | Path | None = None,
        max_keep_ckpts: int = -1,
        save_last: bool = True,
        save_best: str | list[str] | None = None,
        rule: str | list[str] | None = None,
        greater_keys: str | Sequence[str] | None = None,
        less_keys: str | Sequence[str] | None = None,
        file_client_args: dict | None = None,
        filename_tmpl: str | None = None,
        backend_args: dict | None = None,
        published_keys: str | Sequence[str] | None = None,
        save_begin: int = 0,
        max_keep_best: int = 1,
        **lightning: Any,
    ) -> None:
        if lightning:  # keywords it does not take: refused, Lightning's with runnerx's name
            refuse_unknown_keywords(
                "CheckpointHook",
                lightning,
                self.__init__,
                LIGHTNING_ARGUMENTS,
                "Lightning's ModelCheckpoint (docs/lightning.md, 'The built-in callbacks')",
            )
        for name, value in (("interval", interval), ("max_keep_ckpts", max_keep_ckpts)):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"CheckpointHook: {name} must be an int, got {value!r}")
        if max_keep_ckpts == 0:
            print_log(
                "CheckpointHook: max_keep_ckpts=0 keeps every checkpoint (as -1 does, MMEngine's "
                "rule); to save none, set default_hooks.checkpoint=None",
                logger="current",
                level=logging.WARNING,
            )
        if isinstance(save_begin, bool) or not isinstance(save_begin, int) or save_begin < 0:
            raise ValueError(f"CheckpointHook: save_begin must be an int >= 0, got {save_begin!r}")
        backend_args = backend_args_of(file_client_args, backend_args)
        self._backend = out_dir_backend(out_dir, backend_args, "default_hooks.checkpoint")
        remote = not isinstance(self._backend, LocalBackend)
        if remote and (max_keep_ckpts > 0 or save_best is not None):
            require(
                self._backend,
                ("isfile", "remove"),
                "default_hooks.checkpoint.out_dir",
                "removing old checkpoints' copies (max_keep_ckpts, save_best)",
            )
        self.interval = interval
        self.by_epoch = by_epoch
        self.save_optimizer = save_optimizer
        self.save_param_scheduler = save_param_scheduler
        self.out_dir = out_dir
        self.max_keep_ckpts = max_keep_ckpts
        self.save_last = save_last
        self.save_begin = save_begin
        self.filename_tmpl = filename_tmpl or ("epoch_{}.pth" if by_epoch else "iter_{}.pth")
        try:
            self.filename_tmpl.format(1)
        except (IndexError, KeyError, ValueError) as err:
            raise ValueError(
                f"CheckpointHook: filename_tmpl must have one '{{}}' for the epoch or iteration "
                f"number, got {filename_tmpl!r}"
            ) from err
        # as in MMEngine, given keys (an empty list too) replace the defaults
        self.greater_keys = (
            self._default_greater_keys
            if greater_keys is None
            else _keys(greater_keys, "greater_keys")
        )
        self.less_keys = (
            self._default_less_keys if less_keys is None else _keys(less_keys, "less_keys")
        )
        self.save_best = _names(save_best, "save_best")
        self.published_keys = _names(published_keys, "published_keys")
        self.rules = best_rules(self.save_best, rule, self._infer)
        self._best = BestCheckpoints(max_keep_best, self.save_best)
        self.max_keep_best = max_keep_best
        self.last_ckpt: str | None = None
        self._out_dir: str | None = None  # settled in before_train
        self._copies: CheckpointCopies | None = None
        self._kept = KeptCheckpoints(max_keep_ckpts)
        self._saved: tuple[int, int] | None = None  # (step, iterations) of the last save

    @property
    def file_backend(self) -> Any:
        """The storage backend of ``out_dir`` (MMEngine's attribute; a ``LocalBackend`` for the
        work dir): where checkpoints are written, or copied to for a remote ``out_dir``."""
        return self._backend

    def _infer(self, key: str) -> str:
        return infer_rule(key, self.greater_keys, self.less_keys, where="CheckpointHook")

    def overridden_points(self) -> list[str]:
        """Leave out the points this configuration never acts at (no call per iteration when
        saving by epoch)."""
        unused = {"after_train_iter"} if self.by_epoch else {"after_train_epoch"}
        if not self.save_best:
            unused |= {"after_val_epoch", "before_run"}
        if not self.save_best and not self.published_keys and self.max_keep_ckpts <= 0:
            unused.add("after_train")
        return self.points_without(super().overridden_points(), unused)

    def before_train(self, runner: Any) -> None:
        """Settle the output folder and pick up the bookkeeping a resumed run carries."""
        super().before_train(runner)
        work_dir = str(runner.work_dir)
        folder = work_dir
        if self.out_dir is not None and str(self.out_dir) != work_dir:
            basename = os.path.basename(os.path.normpath(work_dir))
            folder = store_path(self._backend, str(self.out_dir), basename)
        if isinstance(self._backend, LocalBackend):  # as in MMEngine: written there directly
            self._out_dir = folder
            runner.logger.info(f"Checkpoints will be saved to {self._out_dir}.")
        else:
            self._out_dir = work_dir
            self._copies = CheckpointCopies(self._backend, folder)
            runner.logger.info(
                f"Checkpoints will be saved to {work_dir} and copied to {folder} once complete."
            )
        if is_main_process():
            self._remove_partial_files(runner, work_dir)
            self._warn_of_an_earlier_run(runner, work_dir)
        self._best.resume(runner, self.rules, self._out_dir, self._copies)
        hub = runner.message_hub
        resumed = hub.get_info("last_ckpt")  # one without the records below: vetted as loaded
        if resumed and not (hub.get_info(FINITE_CANDIDATE) or hub.get_info(LAST_FINITE_CKPT)):
            vet_checkpoint(hub, getattr(runner, "model", None), resumed)
        if self.max_keep_ckpts > 0:
            beyond = self._kept.resume(runner, self._out_dir, self.filename_tmpl.format)
            self._remove(runner, beyond)

    def _warn_of_an_earlier_run(self, runner: Any, work_dir: str) -> None:
        """Say so when this run will save over checkpoints in the work dir newer than the one it
        starts from: another run's (one it does not resume), or, resumed from an older
        checkpoint of the work dir's run, that run's later ones."""
        earlier = find_latest_checkpoint(work_dir)
        resumed = runner.message_hub.get_info("last_ckpt")  # restored by a resume only
        if not earlier or resumed == earlier:
            return
        folders = {os.path.realpath(work_dir), os.path.realpath(self._out_dir)}
        if resumed and os.path.dirname(os.path.realpath(resumed)) in folders:
            runner.logger.warning(
                f"resumed after {runner.iter} iterations, from a checkpoint older than the "
                f"work dir's newest, {earlier}: the checkpoints saved after it are replaced as "
                f"training reaches them, and last_checkpoint names {earlier} until this run "
                "saves one (to keep them, resume into another --work-dir)"
            )
            return
        runner.logger.warning(
            f"{work_dir} holds the checkpoints of an earlier run (its last: {earlier}); "
            "this run saves checkpoints of the same names over them: continue that run "
            "with --resume (resume=True), or train in another --work-dir"
        )

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Save every ``interval`` iterations and after the last one (when not ``by_epoch``)."""
        if self.by_epoch:
            return
        if self.every_n_train_iters(runner, self.interval, self.save_begin) or (
            self.save_last and self.is_last_train_iter(runner)
        ):
            runner.logger.info(f"Saving checkpoint at {runner.iter + 1} iterations")
            self._save(runner, runner.iter + 1, dict(epoch=runner.epoch, iter=runner.iter + 1))

    def after_train_epoch(self, runner: Any) -> None:
        """Save every ``interval`` epochs and after the last one (when ``by_epoch``)."""
        if not self.by_epoch:
            return
        if self.every_n_epochs(runner, self.interval, self.save_begin) or (
            self.save_last and self.is_last_train_epoch(runner)
        ):
            runner.logger.info(f"Saving checkpoint at {runner.epoch + 1} epochs")
            self._save(runner, runner.epoch + 1, dict(epoch=runner.epoch + 1, iter=runner.iter))

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Save a new best checkpoint when a ``save_best`` metric improved during training; a
        validation on its own (``runner.val()``, also after ``train()``) saves nothing, as
        Lightning's ``validate()``."""
        if not self.save_best or not self._training:
            return
        if not metrics:
            runner.logger.warning(
                "CheckpointHook: the validation gave no metrics; the best checkpoint is unchanged"
            )
            return
        if "auto" in self.rules:
            first = next(iter(metrics))
            self.save_best = [first]
            self.rules = {first: self.rules["auto"] or self._infer(first)}
        mid_epoch = getattr(runner.train_loop, "validating_mid_epoch", False)  # val_check_interval
        if not self.by_epoch or mid_epoch:
            step_file, at = self._iter_file(runner.iter), f"{runner.iter} iter"
        else:
            step_file, at = self.filename_tmpl.format(runner.epoch), f"{runner.epoch} epoch"
        entered = self._best.update(runner, self.rules, metrics, step_file, at)
        if entered and self._saved is not None and self._saved[1] == runner.iter:
            # The periodic checkpoint of this iteration was written before validation: write
            # it again so that it records the new best ones (resuming from it then knows which
            # best checkpoints to replace), as MMEngine does. Unlike MMEngine, no checkpoint is
            # written for a step the interval did not save: a resume from the previous one
            # validates at this step again.
            self._save(runner, self._saved[0], dict(epoch=runner.epoch, iter=runner.iter))

    def save_at_stop(self, runner: Any, reason: str) -> None:
        """Save ``iter_<N>.pth`` now, outside the interval, unless this iteration's periodic
        checkpoint is saved already (PreemptionHook's checkpoint when a stop signal or
        ``max_time`` ends training; ``reason`` is logged). It is named in ``last_checkpoint``
        as the periodic ones; with ``max_keep_ckpts > 0`` the next periodic one replaces it."""
        step = runner.iter + 1
        if self._saved is not None and self._saved[1] == step:
            return
        raise_if_a_save_failed(runner)
        runner.logger.info(f"{reason}: saving a checkpoint at {step} iterations")
        filename, dropped = self._iter_file(step), []
        path = os.path.join(self._out_dir, filename)
        vet_checkpoint(runner.message_hub, getattr(runner, "model", None), path)
        if self.max_keep_ckpts > 0:  # one stopped before, not replaced since: this one does
            dropped = self._take_stop_checkpoint(runner.message_hub)
            runner.message_hub.update_info(STOP_CKPT, filename)
        self._write(runner, filename, dict(epoch=runner.epoch, iter=step), dropped)

    def after_train(self, runner: Any) -> None:
        """Once all iterations are done, remove a stop's checkpoint (``max_keep_ckpts``);
        publish the last and the best checkpoints when ``published_keys`` is set."""
        super().after_train(runner)
        if self.max_keep_ckpts > 0 and runner.iter >= runner.max_iters:
            released = self._take_stop_checkpoint(runner.message_hub)
            if released:
                with queued_by(runner):
                    after_pending_writes(lambda: self._remove(runner, released))
        if not self.published_keys or not is_main_process():
            return
        wait_for_pending_writes(owner=runner)  # the checkpoints to publish must be in place
        paths = [self.last_ckpt] if self.save_last else []
        paths += self._best.best_paths()
        for path in dict.fromkeys(path for path in paths if path):
            checkpoint = load_checkpoint(path)
            published = strip_training_state(checkpoint, self.published_keys, meta_keys=None)
            dropped = [str(key) for key in checkpoint if key not in published]
            final_path = write_published(published, path)
            runner.logger.info(
                f"The checkpoint {path} is published to {final_path}"
                + (f" (without {', '.join(dropped)})." if dropped else ".")
            )
            if self._copies is not None:
                self._copies.upload(final_path, runner.logger)

    def _save(self, runner: Any, step: int, meta: dict) -> None:
        raise_if_a_save_failed(runner)
        filename, dropped = self.filename_tmpl.format(step), []
        path = os.path.join(self._out_dir, filename)
        vet_checkpoint(runner.message_hub, getattr(runner, "model", None), path)
        if self.max_keep_ckpts > 0:
            hub = runner.message_hub
            dropped = self._take_stop_checkpoint(hub)
            dropped += self._kept.add(hub, step, path)
        self._saved = (step, meta["iter"])
        self._write(runner, filename, meta, dropped)

    def _write(self, runner: Any, filename: str, meta: dict, dropped: list[str]) -> None:
        """Save the newest checkpoint, ``filename`` in the out dir; remove ``dropped`` then."""
        path = os.path.join(self._out_dir, filename)
        self.last_ckpt = path
        runner.message_hub.update_info("last_ckpt", path)
        with queued_by(runner):  # a failure is this run's, not another Runner's
            save_in_background(
                runner,
                self._out_dir,
                filename,
                save_optimizer=self.save_optimizer,
                save_param_scheduler=self.save_param_scheduler,
                meta=meta,
            )
            # Queued behind the checkpoint's own background write: last_checkpoint names it
            # only once it is complete, and older ones go only after that (neither, if it
            # failed).
            if is_main_process():
                after_pending_writes(lambda: point_last_checkpoint(str(runner.work_dir), path))
                upload_when_complete(self._copies, path, runner.logger)
            if dropped:
                after_pending_writes(lambda: self._remove(runner, dropped))

    def _iter_file(self, iterations: int) -> str:
        """The file name of a checkpoint saved after ``iterations``, not at an epoch's end."""
        if not self.by_epoch:
            return self.filename_tmpl.format(iterations)
        return f"iter_{iterations}{os.path.splitext(self.filename_tmpl)[1] or '.pth'}"

    def _take_stop_checkpoint(self, hub: Any) -> list[str]:
        """The checkpoint an earlier stop saved, now replaced."""
        name = hub.get_info(STOP_CKPT)
        if not name:
            return []
        hub.pop_info(STOP_CKPT)
        return [os.path.join(self._out_dir, name)]

    def _remove_partial_files(self, runner: Any, work_dir: str) -> None:
        """Delete the temporary files of saves that a crash (or a kill) interrupted."""
        extension = os.path.splitext(self.filename_tmpl)[1] or ".pth"
        removed = remove_partial_files(self._out_dir, lambda name: name.endswith(extension))
        removed += remove_partial_files(work_dir, lambda name: name == "last_checkpoint")
        if removed:
            runner.logger.info(
                f"Removed {len(removed)} partly written file(s) of an interrupted run: "
                + ", ".join(os.path.basename(path) for path in removed)
            )

    def _remove(self, runner: Any, paths: list[str]) -> None:
        if not is_main_process():
            return
        finite = os.path.basename(runner.message_hub.get_info(LAST_FINITE_CKPT) or "")
        for path in paths:
            if os.path.basename(path) == finite:
                runner.logger.info(
                    f"Kept {path} beyond max_keep_ckpts: the last checkpoint saved before "
                    "training diverged"
                )
                continue
            remove_checkpoint(path, self._copies, runner.logger, "max_keep_ckpts", self._out_dir)


def _names(value: str | Sequence[str] | None, key: str) -> list[str]:
    """``value`` as a list of distinct names ([] for None); errors are also AssertionErrors,
    as MMEngine's checks are asserts."""
    if value is None:
        return []
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeAssertionError(
            f"CheckpointHook: {key} must be a str, a list of str or None, got {value!r}"
        )
    if len(set(names)) != len(names):
        raise ValueAssertionError(f"CheckpointHook: {key} has duplicates: {value!r}")
    return list(names)


def _keys(value: str | Sequence[str], key: str) -> Sequence[str]:
    """``greater_keys`` / ``less_keys`` checked and kept as MMEngine keeps them: a list or
    tuple as given, a str as a 1-tuple."""
    _names(value, key)
    return (value,) if isinstance(value, str) else value
