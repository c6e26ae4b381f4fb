"""ProfilerHook: runs ``torch.profiler`` over the first epochs or iterations of training."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from typing import Any

import torch
from torch import profiler
from torch.autograd.profiler_util import EventList

from runnerx.dist import get_rank
from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS
from runnerx.utils.errors import ValueTypeError

_RECORDING = (profiler.ProfilerAction.RECORD, profiler.ProfilerAction.RECORD_AND_SAVE)


@HOOKS.register_module()
class ProfilerHook(Hook):
    """Profiles the first ``profile_times`` training epochs (``by_epoch=True``) or iterations
    with ``torch.profiler`` and then stops, as MMEngine's ProfilerHook does::

        custom_hooks = [
            dict(type='ProfilerHook', by_epoch=False, profile_times=10,
                 schedule=dict(wait=1, warmup=1, active=3),
                 on_trace_ready=dict(type='log_trace', sort_by='cpu_time_total', row_limit=20),
                 json_trace_path='work_dirs/trace.json'),
        ]

    - ``activity_with_cpu`` / ``activity_with_cuda``: what to trace; CUDA must be one of
      ``torch.profiler.supported_activities()``, and at least one must be True (MMEngine
      then silently traces everything torch supports).
    - ``schedule``: keyword arguments of ``torch.profiler.schedule`` (``wait``, ``warmup``,
      ``active``, ``repeat``, ``skip_first``, ...); the profiler steps once per iteration,
      also with ``by_epoch=True``. A schedule that records nothing within the profiled
      iterations is an error.
    - ``on_trace_ready``: a callable given the profiler; ``dict(type='log_trace', **kwargs)``
      logs ``prof.key_averages().table(**kwargs)``; ``dict(type='tb_trace', dir_name=...,
      worker_name=..., use_gzip=...)`` writes TensorBoard traces to ``dir_name`` (relative to
      ``runner.log_dir``; default ``<log_dir>/tf_tracing_logs``; torch-tb-profiler is only
      needed to view them).
    - ``record_shapes``, ``profile_memory``, ``with_stack``, ``with_flops``: as in
      ``torch.profiler.profile``.
    - ``json_trace_path``: where to export the Chrome trace; it is written each time a trace
      is ready (without a schedule: when profiling ends; with one: as each recorded cycle
      completes, and for a cycle cut short by the end of profiling), so the file holds the
      last recorded cycle even when profiling stops in the wait or warmup of a later one;
      rank r > 0 of a distributed run writes ``<name>_rank<r>.<ext>`` beside it (in MMEngine
      every rank writes the same file).

    Differences from MMEngine, which starts in ``before_run``: profiling starts in
    ``before_train``, so checkpoint loading is not in the trace and ``profile_times`` counts
    this run's epochs/iterations, also after a resume; more than one epoch may be profiled;
    with ``by_epoch=False`` it stops after ``profile_times`` iterations even when they span
    several epochs, and without stepping the profiler once more (MMEngine's extra step can
    open a new, empty cycle of the schedule, which is then the one exported: a bug, which
    its ``by_epoch=True`` also has when the epoch ends in a later cycle's wait or warmup).
    With ``by_epoch=True`` and no schedule the hook is not called per iteration, and once it
    has stopped it is not called at all (it asks the loop to ``refresh_hooks``).
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        *,
        by_epoch: bool = True,
        profile_times: int = 1,
        activity_with_cpu: bool = True,
        activity_with_cuda: bool = False,
        schedule: dict | None = None,
        on_trace_ready: Callable | dict | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        json_trace_path: str | os.PathLike | None = None,
    ) -> None:
        flags = dict(
            by_epoch=by_epoch,
            activity_with_cpu=activity_with_cpu,
            activity_with_cuda=activity_with_cuda,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
        )
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(f"ProfilerHook: {name} must be True or False, got {value!r}")
        if (
            isinstance(profile_times, bool)
            or not isinstance(profile_times, int)
            or profile_times < 1
        ):
            raise ValueError(
                "ProfilerHook: profile_times must be a positive int (epochs with by_epoch=True, "
                f"iterations otherwise), got {profile_times!r}"
            )
        if not torch.autograd.kineto_available():
            raise RuntimeError("ProfilerHook needs a torch built with Kineto (torch.profiler)")
        if json_trace_path is not None and not isinstance(json_trace_path, (str, os.PathLike)):
            raise TypeError(
                "ProfilerHook: json_trace_path must be a file path or None, "
                f"got {json_trace_path!r}"
            )
        self.by_epoch = by_epoch
        self.profile_times = profile_times
        self.activities = _activities(activity_with_cpu, activity_with_cuda)
        self.schedule = schedule
        self._schedule = _build_schedule(schedule)
        self.on_trace_ready = on_trace_ready
        self._trace_options = _check_on_trace_ready(on_trace_ready)
        self._profile_options = dict(
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
        )
        self.json_trace_path = None if json_trace_path is None else os.fspath(json_trace_path)
        self.profiler: Any = None  # the torch profiler, kept after it stopped for inspection
        self._running = False
        self._finished = False
        self._epochs_done = 0

    def overridden_points(self) -> list[str]:
        """No point once profiling has finished; no ``after_train_iter`` when nothing needs
        stepping per iteration (``by_epoch=True`` without a schedule)."""
        if self._finished:
            return []
        idle = self.by_epoch and self._schedule is None
        return self.points_without(
            super().overridden_points(), ["after_train_iter"] if idle else []
        )

    def before_train(self, runner: Any) -> None:
        """Check ``profile_times`` and ``schedule`` against the run, then start profiling."""
        unit = "epochs" if self.by_epoch else "iterations"
        total = runner.max_epochs if self.by_epoch else runner.max_iters
        if self.profile_times > total:
            raise ValueError(
                f"ProfilerHook: profile_times={self.profile_times} is more than the {total} "
                f"{unit} this training runs"
            )
        if self._schedule is not None:
            per_time = runner.max_iters // runner.max_epochs if self.by_epoch else 1
            window = self.profile_times * per_time
            if not any(self._schedule(step) in _RECORDING for step in range(window)):
                raise ValueError(
                    f"ProfilerHook: schedule={dict(self.schedule)!r} records nothing in the "
                    f"{window} iterations profiled; lower skip_first/wait/warmup or raise "
                    "profile_times"
                )
        self.profiler = profiler.profile(
            activities=self.activities,
            schedule=self._schedule,
            on_trace_ready=self._trace_handler(runner),
            **self._profile_options,
        )
        self.profiler.start()
        self._running = True
        runner.logger.info(f"ProfilerHook: profiling the first {self.profile_times} {unit}")

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Step the profiler; stop after ``profile_times`` iterations (``by_epoch=False``)."""
        if not self._running:
            return
        if not self.by_epoch and self.profiler.step_num + 1 >= self.profile_times:
            # a step first would start the schedule's next action for an iteration not profiled
            # (a new, empty trace that json_trace_path would then get instead of the last one)
            self._stop(runner)
        else:
            self.profiler.step()

    def after_train_epoch(self, runner: Any) -> None:
        """Stop after ``profile_times`` epochs (``by_epoch=True``)."""
        if self._running and self.by_epoch:
            self._epochs_done += 1
            if self._epochs_done >= self.profile_times:
                self._stop(runner)

    def after_train(self, runner: Any) -> None:
        """Stop if training ended before ``profile_times`` was reached."""
        if self._running:
            self._stop(runner)

    def _stop(self, runner: Any) -> None:
        self._running = False
        self._finished = True
        refresh = getattr(getattr(runner, "train_loop", None), "refresh_hooks", None)
        if callable(refresh):  # no call per iteration from now on
            refresh()
        self.profiler.stop()  # hands a trace cut short by the stop to on_trace_ready
        if self.json_trace_path is not None:
            runner.logger.info(
                f"ProfilerHook: Chrome trace written to {_rank_path(self.json_trace_path)}"
            )

    def _trace_handler(self, runner: Any) -> Callable | None:
        """on_trace_ready for torch: the user's handler, then the Chrome trace export; it runs
        when a recorded cycle ends, never for a cycle stopped in its wait or warmup."""
        handler = self._user_handler(runner)
        if self.json_trace_path is None:
            return handler
        path = _rank_path(self.json_trace_path)

        def ready(prof: Any) -> None:
            if handler is not None:
                handler(prof)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            prof.export_chrome_trace(path)

        return ready

    def _user_handler(self, runner: Any) -> Callable | None:
        if self._trace_options is None:
            return self.on_trace_ready  # None or the user's callable
        options = dict(self._trace_options)
        if self.on_trace_ready["type"] == "log_trace":

            def log_table(prof: Any) -> None:
                runner.logger.info("ProfilerHook:\n" + prof.key_averages().table(**options))

            return log_table
        options["dir_name"] = os.path.join(
            runner.log_dir, options.get("dir_name", "tf_tracing_logs")
        )
        runner.logger.info(f"ProfilerHook: TensorBoard traces go to {options['dir_name']}")
        return profiler.tensorboard_trace_handler(**options)


def _activities(cpu: bool, cuda: bool) -> list:
    if not (cpu or cuda):
        raise ValueError(
            "ProfilerHook: activity_with_cpu and activity_with_cuda are both False; set at "
            "least one to True"
        )
    if cuda and profiler.ProfilerActivity.CUDA not in profiler.supported_activities():
        supported = sorted(activity.name for activity in profiler.supported_activities())
        raise ValueError(
            "ProfilerHook: activity_with_cuda=True, but this torch cannot profile CUDA here "
            f"(supported: {', '.join(supported)}); set activity_with_cuda=False"
        )
    return [profiler.ProfilerActivity.CPU] * cpu + [profiler.ProfilerActivity.CUDA] * cuda


def _build_schedule(schedule: dict | None) -> Callable | None:
    if schedule is None:
        return None
    if not isinstance(schedule, dict):
        raise TypeError(
            "ProfilerHook: schedule must be a dict of torch.profiler.schedule's arguments "
            f"(e.g. dict(wait=1, warmup=1, active=3)) or None, got {schedule!r}"
        )
    _check_keys("schedule", schedule, profiler.schedule)
    try:
        return profiler.schedule(**schedule)
    except (TypeError, ValueError, AssertionError) as error:
        raise ValueTypeError(  # MMEngine's is torch's TypeError for missing arguments
            f"ProfilerHook: schedule={dict(schedule)!r} is not valid for "
            f"torch.profiler.schedule: {error}"
        ) from None


def _check_on_trace_ready(on_trace_ready: Any) -> dict | None:
    """The keyword arguments of a ``log_trace``/``tb_trace`` dict (None otherwise)."""
    if on_trace_ready is None:
        return None
    if not isinstance(on_trace_ready, dict):
        if callable(on_trace_ready):
            return None
        raise TypeError(
            "ProfilerHook: on_trace_ready must be a callable, dict(type='log_trace', ...), "
            f"dict(type='tb_trace', ...) or None, got {on_trace_ready!r}"
        )
    options = dict(on_trace_ready)
    kind = options.pop("type", None)
    targets = {"log_trace": EventList.table, "tb_trace": profiler.tensorboard_trace_handler}
    if kind not in targets:
        raise ValueError(
            f"ProfilerHook: on_trace_ready.type must be 'log_trace' or 'tb_trace', got {kind!r}"
        )
    _check_keys(f"on_trace_ready (type={kind!r})", options, targets[kind])
    return options


def _check_keys(name: str, given: dict, function: Callable) -> None:
    # the accepted keys are read from this torch's own signature (they grow between versions)
    accepted = [key for key in inspect.signature(function).parameters if key != "self"]
    unknown = sorted(set(given) - set(accepted))
    if unknown:
        raise ValueError(
            f"ProfilerHook: {name} has unknown key(s) {unknown}; this torch accepts "
            f"{', '.join(accepted)}"
        )


def _rank_path(path: str) -> str:
    rank = get_rank()
    if rank == 0:
        return path
    folder, name = os.path.split(path)
    stem, dot, extension = name.partition(".")
    return os.path.join(folder, f"{stem}_rank{rank}{dot}{extension}")
