"""PreemptionHook: a job told to stop saves a checkpoint first, then requeues or exits.

Slurm sends SIGUSR1 some time before a job's time limit when asked to (``#SBATCH
--signal=USR1@90``) and SIGTERM before it cancels or preempts a job; Kubernetes and most
schedulers send SIGTERM. The signal handler only notes the signal. At the next iteration
boundary every rank learns of it (:class:`runnerx.dist.agreement.AnyRankFlag`; at the
boundary before a validation with a blocking read, so that no validation runs first), all
of them save one checkpoint together (``iter_<N>.pth``, in the run's checkpoint format,
pointed to by ``last_checkpoint``) and training stops. With a ``CheckpointHook``, it saves
that checkpoint (in its folder, in its rotation: with ``max_keep_ckpts > 0`` the resumed
run's next periodic checkpoint replaces it). Then, after a signal of ``requeue_signals``
inside a Slurm batch job, rank 0 runs ``scontrol requeue $SLURM_JOB_ID``; the job comes back
and ``--resume`` continues exactly where it stopped. ``tools/train.py`` exits with
:data:`PREEMPTED_EXIT_CODE` (75) after a preemption, so that any scheduler can tell it from
success (0) and failure (1).

A second signal to this process, more than 2 s after its first, takes its default action (the
process ends at once), so a job that hangs can still be stopped; one within 2 s is the same
request delivered twice (Slurm signals every process of a job step, and torchrun passes the
signal on to its ranks), and a rank that learned of the stop from another rank, or from
``max_time``, takes its own copy of the signal as that same stop. The workers of the training and
validation DataLoaders, which a scheduler signals with the rest of the job, leave the
signals to the main process (:class:`~runnerx.data.worker_init.LeaveSignalsToMain`) and
keep serving batches until the checkpoint is saved.

``max_time`` (Lightning's ``Trainer(max_time=...)``) does the same once the training has
taken that long, as Lightning counts it: wall time from ``before_train``, validation
included, plus the time of the runs it resumes from (every checkpoint records the total in
``meta['train_time']``, in seconds). A timer thread raises the flag, so the iterations pay
nothing for it, and the stop comes at the next iteration boundary.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import Any

from torch.utils.data import DataLoader

from runnerx.checkpoint.runner_state import point_last_checkpoint
from runnerx.data.build import stop_workers
from runnerx.data.worker_init import LeaveSignalsToMain
from runnerx.dist import barrier, is_main_process
from runnerx.dist.agreement import AnyRankFlag
from runnerx.fileio import after_pending_writes, wait_for_pending_writes
from runnerx.hooks.best_checkpoints import raise_if_a_save_failed
from runnerx.hooks.checkpoint_hook import CheckpointHook
from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS
from runnerx.runner.batch_limits import unlimited

#: what ``tools/train.py`` exits with after saving a checkpoint on a stop signal
#: (EX_TEMPFAIL of sysexits.h: "try again later"; Slurm's ``RequeueExit=75`` requeues on it)
PREEMPTED_EXIT_CODE = 75
#: the flag max_time raises: above every signal number, so it wins when ranks disagree
_TIME_UP = 256


@HOOKS.register_module(replaceable=True)
class PreemptionHook(Hook):
    """Checkpoint and stop on SIGTERM / SIGUSR1 (a default hook; ``None`` turns it off)::

        default_hooks = dict(preemption=dict(
            type='PreemptionHook', signals=('SIGTERM', 'SIGUSR1'), requeue_signals=('SIGUSR1',)))

    ``signals``: the signals that mean "save and stop". ``requeue_signals``: those after
    which a Slurm batch job requeues itself (SIGUSR1 is Slurm's time-limit warning; SIGTERM
    usually comes from ``scancel``, which must not bring the job back). ``max_time``: save and
    stop once the training has taken that long, the runs it resumed from included (no
    requeue): seconds, ``'DD:HH:MM:SS'`` or ``'HH:MM:SS'``, a dict of ``timedelta``'s keywords
    or a ``timedelta``::

        default_hooks = dict(preemption=dict(max_time='00:11:50:00'))  # 11 h 50 min

    For a job's own time limit, which starts again with each requeued job, use the scheduler's
    warning signal instead (Slurm: ``#SBATCH --signal=USR1@90``).
    """

    priority = "LOWEST"  # after the other hooks' work of the iteration (scheduler, checkpoint)

    def __init__(
        self,
        signals: Sequence[str] = ("SIGTERM", "SIGUSR1"),
        requeue_signals: Sequence[str] = ("SIGUSR1",),
        max_time: float | str | Mapping | timedelta | None = None,
    ) -> None:
        self.max_time = _seconds(max_time)
        self._timer: threading.Timer | None = None
        self.signals = [_signal_number(name, "signals") for name in _names(signals)]
        self.requeue_signals = {
            _signal_number(name, "requeue_signals") for name in _names(requeue_signals)
        }
        self.received: int | None = None  # the first stop signal this process got
        self._signalled_at: float | None = None  # when this process got its own first one
        self.preempted_by: str | None = None  # set once the run stopped for a signal
        self._previous: dict[int, Any] = {}
        self._flag: AnyRankFlag | None = None
        self._pid = os.getpid()
        self._started: float | None = None  # time.monotonic() at before_train
        # seconds trained before this run began (by the runs it resumed from); after the
        # run, the whole training's
        self.time_before = 0.0

    def before_train(self, runner: Any) -> None:
        """Take over the stop signals for the length of the training."""
        self._flag = AnyRankFlag()
        self.received = self.preempted_by = self._signalled_at = None
        self._pid = os.getpid()
        self._started = time.monotonic()
        self._start_timer(runner)
        self._leave_signals_to_main(runner)
        if threading.current_thread() is not threading.main_thread():
            runner.logger.warning(
                "PreemptionHook: training runs outside the main thread, where signal handlers "
                "cannot be set; stop signals will end the process without a checkpoint"
            )
            return
        for number in self.signals:
            self._previous[number] = signal.signal(number, self._on_signal)

    def _leave_signals_to_main(self, runner: Any) -> None:
        """Have the workers of the training and validation DataLoaders leave the stop signals
        to this process, wrapping their ``worker_init_fn``. Persistent workers started before
        (by the sanity check) are shut down: the next pass starts wrapped ones."""
        signals = tuple(sorted(self.signals))
        for loop in (getattr(runner, "train_loop", None), getattr(runner, "val_loop", None)):
            loader = unlimited(getattr(loop, "dataloader", None))  # limit_batches: its loader
            if not isinstance(loader, DataLoader) or not loader.num_workers:
                continue
            init_fn = loader.worker_init_fn
            if isinstance(init_fn, LeaveSignalsToMain):
                if init_fn.signals == signals:
                    continue
                init_fn = init_fn.init_fn
            loader.worker_init_fn = LeaveSignalsToMain(init_fn, signals)
            stop_workers(loader)

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Record the training's wall time so far (seconds, resumed runs included) in
        ``meta['train_time']``."""
        checkpoint.setdefault("meta", {})["train_time"] = round(self.train_time(), 3)

    def train_time(self) -> float:
        """Seconds of training so far: this run's (from ``before_train`` to ``after_train``)
        and those of the runs it resumed from."""
        if self._started is None:
            return self.time_before
        return self.time_before + time.monotonic() - self._started

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """On resume: take over the time the earlier runs trained (a ``load_from`` starts a
        new run, whose ``max_time`` counts from zero)."""
        if getattr(runner, "_resume", False):
            self.time_before = float(checkpoint.get("meta", {}).get("train_time", 0.0))

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """At an iteration boundary: once any rank got a stop signal, save and stop (all ranks)."""
        flag = self._flag
        agreed = self.received
        if flag.shared:
            agreed = flag.check(self.received or 0)
            if not agreed and _validation_follows(runner):
                # the next check waits for the one just started: every rank's flag as of
                # now, so that a signal of this iteration stops training before validating
                agreed = flag.check(self.received or 0)
        if not agreed:
            return
        self.received = agreed  # the same signal on every rank, whichever got it
        name = "max_time" if agreed == _TIME_UP else signal.Signals(agreed).name
        reason = f"{name} received"
        if agreed == _TIME_UP:  # another rank's time may have run out first
            limit = f" ({timedelta(seconds=self.max_time)})" if self.max_time else ""
            reason = f"max_time{limit} reached"
        checkpoints = next((h for h in runner.hooks if isinstance(h, CheckpointHook)), None)
        if checkpoints is not None:
            checkpoints.save_at_stop(runner, reason)
        else:
            self._save_alone(runner, reason)
        runner.train_loop.stop_now = runner.train_loop.stop_training = True
        self.preempted_by = name

    def _save_alone(self, runner: Any, reason: str) -> None:
        """Save ``iter_<N>.pth`` in the work dir, in a run without a CheckpointHook."""
        raise_if_a_save_failed(runner)
        step = runner.iter + 1
        path = os.path.join(runner.work_dir, f"iter_{step}.pth")
        runner.logger.info(f"{reason}: saving a checkpoint at {step} iterations")
        runner.message_hub.update_info("last_ckpt", path)
        runner.save_checkpoint(runner.work_dir, os.path.basename(path), by_epoch=False)
        if is_main_process():
            after_pending_writes(lambda: point_last_checkpoint(runner.work_dir, path))

    def after_train(self, runner: Any) -> None:
        """Give the signals back; after a stop, finish the checkpoint, then requeue or say how
        the process will end."""
        self._flag.close()
        self._stop_timer()
        self.time_before, self._started = self.train_time(), None
        for number, previous in self._previous.items():
            signal.signal(number, previous)
        self._previous.clear()
        if self.preempted_by is None:
            return
        wait_for_pending_writes(owner=runner)
        barrier()  # every rank's part of the checkpoint is on disk
        requeue = self.received in self.requeue_signals and "SLURM_JOB_ID" in os.environ
        if requeue and is_main_process() and _requeue_slurm_job(runner.logger):
            return
        runner.logger.info(
            f"Training stopped on {self.preempted_by}; resume with --resume. "
            f"tools/train.py exits with {PREEMPTED_EXIT_CODE}."
        )

    def _start_timer(self, runner: Any) -> None:
        self._stop_timer()  # one left by a training that failed
        if self.max_time is None:
            return
        left = self.max_time - self.time_before
        if self.time_before:
            used = timedelta(seconds=round(self.time_before))
            runner.logger.info(
                f"max_time: the runs this one resumes from trained for {used} of "
                f"{timedelta(seconds=self.max_time)}"
                + ("; stopping after the first iteration" if left <= 0 else "")
            )
        if left <= 0:
            self.received = _TIME_UP
            return
        timer = threading.Timer(left, lambda: self._on_time_up(timer))
        timer.daemon = True
        self._timer = timer
        timer.start()

    def _stop_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_time_up(self, timer: threading.Timer) -> None:
        if timer is self._timer and self.received is None:  # not a stale timer, no signal yet
            self.received = _TIME_UP

    def _on_signal(self, number: int, frame: Any) -> None:
        if os.getpid() != self._pid:  # a forked child process
            if _in_dataloader_worker():  # the main process decides; it stops at a boundary
                return
            signal.signal(number, signal.SIG_DFL)  # any other child (a Pool worker): as usual
            os.kill(os.getpid(), number)
            return
        now, first = time.monotonic(), self._signalled_at
        if first is not None and now - first > _REPEAT_GRACE:  # asked again: stop now
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
            return
        if first is None:
            self._signalled_at = now
        if self.received is None:  # else another rank's signal, or max_time, came first
            self.received = number


#: seconds within which another stop signal repeats the first rather than insisting: Slurm
#: signals every process of a job step and torchrun passes the signal on to its ranks too
_REPEAT_GRACE = 2.0


def _validation_follows(runner: Any) -> bool:
    """Whether the training loop validates right after this iteration (False for a loop
    that cannot tell, such as a custom loop of MMEngine's kind)."""
    follows = getattr(runner.train_loop, "validation_follows", None)
    return follows is not None and follows()


def _in_dataloader_worker() -> bool:
    from torch.utils.data import get_worker_info

    return get_worker_info() is not None


def preempted_by(runner: Any) -> str | None:
    """The signal that stopped ``runner``'s training early (None if it ran to the end)."""
    return next(
        (hook.preempted_by for hook in runner.hooks if getattr(hook, "preempted_by", None)), None
    )


def _requeue_slurm_job(logger: Any) -> bool:
    job = os.environ["SLURM_JOB_ID"]
    if "SLURM_ARRAY_JOB_ID" in os.environ:
        job = f"{os.environ['SLURM_ARRAY_JOB_ID']}_{os.environ['SLURM_ARRAY_TASK_ID']}"
    try:
        done = subprocess.run(
            ["scontrol", "requeue", job], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        logger.warning(f"PreemptionHook: could not run scontrol requeue {job}: {error}")
        return False
    if done.returncode != 0:
        logger.warning(
            f"PreemptionHook: scontrol requeue {job} failed: {done.stderr.strip()} "
            "(the job needs --requeue or JobRequeue=1)"
        )
        return False
    logger.info(f"Requeued the Slurm job {job}; it resumes from the checkpoint just saved.")
    return True


def _seconds(max_time: Any) -> float | None:
    """``max_time`` in seconds (None: no limit), or a ValueError that shows the forms."""
    if max_time is None:
        return None
    seconds = None
    try:
        if isinstance(max_time, timedelta):
            seconds = max_time.total_seconds()
        elif isinstance(max_time, Mapping):
            seconds = timedelta(**max_time).total_seconds()
        elif isinstance(max_time, str) and 2 <= len(max_time.split(":")) <= 4:
            fields = [float(part) for part in max_time.split(":")]
            units = (86400, 3600, 60, 1)[-len(fields) :]
            seconds = sum(value * unit for value, unit in zip(fields, units, strict=True))
        elif isinstance(max_time, (int, float)) and not isinstance(max_time, bool):
            seconds = float(max_time)
    except (TypeError, ValueError):
        seconds = None
    if seconds is None or not 0 < seconds < float("inf"):
        raise ValueError(
            "PreemptionHook: max_time must be a duration above 0: seconds, 'DD:HH:MM:SS' or "
            f"'HH:MM:SS', a dict such as dict(hours=11, minutes=50), or a timedelta; got "
            f"{max_time!r}"
        )
    return seconds


def _names(value: str | Sequence[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _signal_number(name: str, key: str) -> int:
    full_name = str(name).upper()
    full_name = full_name if full_name.startswith("SIG") else f"SIG{full_name}"
    number = getattr(signal, full_name, None)
    if not isinstance(number, signal.Signals):
        raise ValueError(
            f"PreemptionHook: {key} has {name!r}, which is not a signal name such as 'SIGTERM'"
        )
    return int(number)
