"""LoggerHook: writes the log lines and sends the logged scalars to the visualizer."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from runnerx.fileio import wait_for_pending_writes
from runnerx.fileio.paths import backend_args_of
from runnerx.fileio.store_copies import out_dir_backend, store_path, upload
from runnerx.hooks.checkpoint_hook import FINITE_CANDIDATE, LAST_FINITE_CKPT
from runnerx.hooks.hook import Hook
from runnerx.logging.log_processor import trains_by_iteration
from runnerx.registry import HOOKS
from runnerx.utils.errors import ValueTypeError


@HOOKS.register_module()
class LoggerHook(Hook):
    """Logs every ``interval`` iterations and after each validation/test epoch (a default hook).

    The lines come from ``runner.log_processor``; a logged training loss that is NaN or
    infinite also gets a warning (once per run) that says what usually cures it and names the
    last checkpoint saved while the losses were finite (which ``max_keep_ckpts`` then
    keeps; a resumed run knows it from the checkpoint's records). Training
    scalars go to ``runner.visualizer.add_scalars`` at step ``runner.iter + 1``, validation
    metrics at step ``runner.epoch`` (``log_metric_by_epoch`` and ``log_processor.by_epoch``
    in a run whose training loop is epoch-based) or ``runner.iter``; a run that also
    validates part-way through its epochs (``train_cfg.val_check_interval``) logs all its
    validations at ``runner.iter``, the iterations trained (as Lightning logs at its global
    step), so that none overwrites another. The last iteration of an epoch is logged too
    unless ``ignore_last``; the experiment name every ``interval_exp_name`` iterations.
    With ``out_dir``, the log files (names ending in ``out_suffix``) are copied to
    ``out_dir/<work_dir's name>`` when the run ends (and removed from the log dir unless
    ``keep_local``), through the storage backend of ``out_dir`` (``backend_args``, or
    MMEngine's deprecated ``file_client_args``, naming it, or a prefix registered with
    ``register_backend``)::

        default_hooks = dict(logger=dict(type='LoggerHook', interval=50, out_dir='s3://b/logs'))
    """

    priority = "BELOW_NORMAL"

    def __init__(
        self,
        interval: int = 10,
        ignore_last: bool = True,
        interval_exp_name: int = 1000,
        out_dir: str | Path | None = None,
        out_suffix: str | Sequence[str] = (".json", ".log", ".py", "yaml"),
        keep_local: bool = True,
        file_client_args: dict | None = None,
        log_metric_by_epoch: bool = True,
        backend_args: dict | None = None,
    ) -> None:
        for name, value in (("interval", interval), ("interval_exp_name", interval_exp_name)):
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                # a value of another type is also MMEngine's TypeError
                error = ValueError if type(value) is int else ValueTypeError
                raise error(f"LoggerHook: {name} must be a positive int, got {value!r}")
        for name, value in (("ignore_last", ignore_last), ("keep_local", keep_local)):
            if not isinstance(value, bool):
                raise TypeError(f"LoggerHook: {name} must be True or False, got {value!r}")
        if out_dir is not None and not isinstance(out_dir, (str, Path)):
            raise TypeError(f"LoggerHook: out_dir must be a path or None, got {out_dir!r}")
        if isinstance(out_suffix, str):
            out_suffix = (out_suffix,)
        if not isinstance(out_suffix, (list, tuple)) or not all(
            isinstance(suffix, str) for suffix in out_suffix
        ):
            raise TypeError(f"LoggerHook: out_suffix must be str or strs, got {out_suffix!r}")
        if file_client_args is not None and out_dir is None:
            raise ValueError(
                "LoggerHook: file_client_args is for copying the logs to out_dir; set out_dir "
                "or remove file_client_args"
            )
        backend_args = backend_args_of(file_client_args, backend_args)
        self._backend = (
            None
            if out_dir is None
            else out_dir_backend(out_dir, backend_args, "default_hooks.logger")
        )
        self.interval = interval
        self.ignore_last = ignore_last
        self.interval_exp_name = interval_exp_name
        self.out_dir = out_dir
        self.out_suffix = tuple(out_suffix)
        self.keep_local = keep_local
        self.log_metric_by_epoch = log_metric_by_epoch
        self.json_log_path: str | None = None  # "<timestamp>.json", set in before_run
        self._copy_dir: str | None = None
        self._epoch_length: int | None = None
        self._warned_divergence = False
        self._val_step_is_iter = False  # the run validates mid-epoch too

    def before_run(self, runner: Any) -> None:
        """Settle where logs are copied to and the name of the test results file."""
        if self.out_dir is not None:
            basename = os.path.basename(os.path.normpath(str(runner.work_dir)))
            self._copy_dir = store_path(self._backend, str(self.out_dir), basename)
            runner.logger.info(f"Text logs will be copied to {self._copy_dir} when the run ends.")
        self.json_log_path = f"{runner.timestamp}.json"

    def before_train(self, runner: Any) -> None:
        """Note the epoch length once (a streaming dataloader without one has no epoch end)
        and whether the loop validates mid-epoch (then validations are logged by iteration)."""
        try:
            self._epoch_length = len(runner.train_dataloader)
        except TypeError:
            self._epoch_length = None
        self._warned_divergence = False
        self._val_step_is_iter = bool(getattr(runner.train_loop, "val_check_batches", 0))

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Log every ``interval`` iterations (and an epoch's last one unless ``ignore_last``)."""
        done = batch_idx + 1
        epoch_end = done == self._epoch_length
        # the common case, decided with two modulos: nothing to log after this iteration
        if done % self.interval and not epoch_end and (runner.iter + 1) % self.interval_exp_name:
            return
        if epoch_end or self.every_n_train_iters(runner, self.interval_exp_name):
            runner.logger.info(f"Exp name: {runner.experiment_name}")
        if not (
            self.every_n_inner_iters(batch_idx, self.interval)
            or (epoch_end and (not self.ignore_last or self._epoch_length <= self.interval))
        ):
            return
        tag, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "train")
        runner.logger.info(log_str)
        runner.visualizer.add_scalars(tag, step=runner.iter + 1, file_path=self.json_log_path)
        if not self._warned_divergence:
            self._warn_if_diverged(runner, tag)

    def _warn_if_diverged(self, runner: Any, tag: dict) -> None:
        """Warn, once per run, when a logged loss is NaN or infinite: the line alone is easy
        to miss, and the run would go on saving checkpoints of broken weights."""
        bad = {
            name: value
            for name, value in tag.items()
            if "loss" in name and isinstance(value, float) and not math.isfinite(value)
        }
        if not bad:
            return
        self._warned_divergence = True
        values = ", ".join(f"{name}={value}" for name, value in bad.items())
        hub = runner.message_hub  # CheckpointHook's records, a resumed run's included
        good = hub.get_info(LAST_FINITE_CKPT) or hub.get_info(FINITE_CANDIDATE)
        told = ""
        if good:
            wait_for_pending_writes(raise_errors=False)  # it may be in flight still
            if os.path.exists(good):  # CheckpointHook keeps it beyond max_keep_ckpts
                hub.update_info(LAST_FINITE_CKPT, good)
                hub.pop_info(FINITE_CANDIDATE)
                told = (
                    f"; {good}, the last checkpoint saved while the losses were finite, "
                    "is kept (max_keep_ckpts does not remove it): resume from it with "
                    f"--resume {good}"
                )
            else:
                told = (
                    f"; no checkpoint saved while the losses were finite is left ({good} is gone)"
                )
        now = runner.iter + 1
        first = min((_first_non_finite(hub, name, now) for name in bad), default=None)
        since = f" (not finite since iteration {first})" if first else ""
        runner.logger.warning(
            f"{values} by iteration {now}{since}: training has diverged, or a batch held "
            "NaN/inf values (check the data of those iterations). For a divergence, a lower "
            "learning rate, gradient clipping (optim_wrapper.clip_grad=dict(max_norm=1.0)) or, "
            "in float16, AmpOptimWrapper's loss scaling usually cure it" + told
        )

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Log the validation progress every ``interval`` iterations."""
        if self.every_n_inner_iters(batch_idx, self.interval):
            _, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "val")
            runner.logger.info(log_str)

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Log the test progress every ``interval`` iterations."""
        if self.every_n_inner_iters(batch_idx, self.interval):
            _, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "test")
            runner.logger.info(log_str)

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Log the validation results and send them to the visualizer."""
        tag, log_str = runner.log_processor.get_log_after_epoch(
            runner, len(runner.val_dataloader), "val"
        )
        runner.logger.info(log_str)
        by_epoch = (
            self.log_metric_by_epoch
            and getattr(runner.log_processor, "by_epoch", True)
            and not (self._val_step_is_iter or trains_by_iteration(runner))
        )
        step = runner.epoch if by_epoch else runner.iter
        runner.visualizer.add_scalars(tag, step=step, file_path=self.json_log_path)

    def after_test_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Log the test results and write them to ``<log_dir>/<timestamp>.json``."""
        tag, log_str = runner.log_processor.get_log_after_epoch(
            runner, len(runner.test_dataloader), "test", with_non_scalar=True
        )
        runner.logger.info(log_str)
        json_log = self.json_log_path or f"{runner.timestamp}.json"
        with open(os.path.join(runner.log_dir, json_log), "w") as file:
            json.dump(_jsonable(tag), file)

    def after_run(self, runner: Any) -> None:
        """Close the visualizer and copy the log files to ``out_dir``."""
        runner.visualizer.close()
        if self._copy_dir is None:
            return
        log_dir = str(runner.log_dir)
        for folder, _, names in os.walk(log_dir):
            for name in names:
                if not name.endswith(self.out_suffix):
                    continue
                local = os.path.join(folder, name)
                relative = os.path.relpath(local, log_dir).split(os.sep)
                target = store_path(self._backend, self._copy_dir, *relative)
                upload(self._backend, local, target)
                runner.logger.info(f"{local} was copied to {target}.")
                if not self.keep_local:
                    os.remove(local)
                    runner.logger.info(f"{local} was removed (keep_local=False).")


def _jsonable(value: Any) -> Any:
    """``value`` with tensors and arrays as lists; values JSON cannot hold become None."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    tolist = getattr(value, "tolist", None)  # tensors, arrays, numpy scalars
    return _jsonable(tolist()) if callable(tolist) else None


def _first_non_finite(hub: Any, name: str, now: int) -> int | None:
    """The iteration of the first non-finite value of ``train/<name>`` in the hub's history
    (one value an iteration, the newest ``now``'s); None when it is not known (no history, or
    the oldest value kept is not finite already). Read once, when divergence is found."""
    buffer = hub.log_scalars.get(f"train/{name}")
    if buffer is None:
        return None
    values = buffer.data[0]
    finite = [math.isfinite(value) for value in values]
    if all(finite) or not finite[0]:
        return None
    return now - len(values) + finite.index(False) + 1
