"""ParamSchedulerHook: steps the learning-rate and momentum schedulers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS

_UNSORTED = object()


@HOOKS.register_module()
class ParamSchedulerHook(Hook):
    """Steps iteration-based schedulers after every training iteration and epoch-based ones
    after every training epoch (one of the default hooks).

    ``runner.param_schedulers`` is a list, or a dict of lists (one per optimizer of an
    OptimWrapperDict), or None. Epoch-based schedulers that need the validation metrics
    (``need_val_args = True``, such as ReduceOnPlateau) are also stepped with the metrics after
    each validation epoch. The schedulers are sorted in ``before_train`` and again whenever
    ``runner.param_schedulers`` is replaced by another object, so a subclass whose
    ``before_train`` does not call ``super()`` still steps them. MMEngine's hook has no
    ``__init__`` either, and this one has none: its state starts as class attributes, so a
    subclass whose ``__init__`` does not call ``super().__init__()`` (mmyolo's
    ``YOLOv5ParamSchedulerHook``) builds and runs.
    """

    priority = "LOW"

    # sorted from runner.param_schedulers (_source) by _sort; _sort sets them on the instance
    _by_iter: Sequence = ()
    _by_epoch: Sequence = ()
    _by_metrics: Sequence = ()
    _source: Any = _UNSORTED

    def before_train(self, runner: Any) -> None:
        """Sort the schedulers once, so that an iteration only loops over its own, and warn
        about epoch-based ones that an iteration-based loop would never step, about those
        that begin or end past the end of training, and about those acting on validation
        metrics in a run that never validates while it trains."""
        self._sort(runner.param_schedulers)
        _warn_if_epochs_never_end(runner)
        _warn_if_past_the_end(runner)
        _warn_if_never_validated(runner)

    def _follow(self, runner: Any) -> None:
        """Sort again if ``runner.param_schedulers`` is not what the lists were sorted from."""
        if runner.param_schedulers is not self._source:
            self._sort(runner.param_schedulers)

    def _sort(self, param_schedulers: Any) -> None:
        # configs still (a val() before train() builds them) have nothing to step
        schedulers = [s for s in _flatten(param_schedulers) if not isinstance(s, Mapping)]
        self._by_iter = [s for s in schedulers if not s.by_epoch]
        self._by_epoch = [s for s in schedulers if s.by_epoch]
        self._by_metrics = [s for s in self._by_epoch if getattr(s, "need_val_args", False)]
        self._source = param_schedulers

    def overridden_points(self) -> list[str]:
        """Once ``before_train`` found no scheduler stepping by iteration, leave out
        ``after_train_iter`` (the train loop asks after ``before_train``), unless a subclass
        implements it anew."""
        own = type(self).after_train_iter is ParamSchedulerHook.after_train_iter
        idle = own and self._source is not _UNSORTED and not self._by_iter
        return self.points_without(
            super().overridden_points(), ["after_train_iter"] if idle else []
        )

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: dict | None = None
    ) -> None:
        """Step the iteration-based schedulers."""
        self._follow(runner)
        for scheduler in self._by_iter:
            scheduler.step()

    def after_train_epoch(self, runner: Any) -> None:
        """Step the epoch-based schedulers."""
        self._follow(runner)
        for scheduler in self._by_epoch:
            scheduler.step()

    def after_val_epoch(self, runner: Any, metrics: dict | None = None) -> None:
        """Give the validation metrics to the schedulers that act on them."""
        if metrics is None:
            return
        self._follow(runner)
        for scheduler in self._by_metrics:
            scheduler.step(metrics)


def _warn_if_epochs_never_end(runner: Any) -> None:
    """Warn once when the train loop is iteration-based and schedulers step by epoch: such a
    loop has no epochs, so they would keep their first value (MMEngine is silent here).
    Schedulers that act on validation metrics (ReduceOnPlateau) are fine: they step after
    each validation."""
    from runnerx.runner.loops import IterBasedTrainLoop  # the runner package imports hooks

    loop = getattr(runner, "train_loop", None)
    if not isinstance(loop, IterBasedTrainLoop):
        return
    stuck = [
        f"{label} (type={type(scheduler).__name__!r})"
        for label, scheduler in _labelled(runner.param_schedulers)
        if scheduler.by_epoch and not getattr(scheduler, "need_val_args", False)
    ]
    if stuck:
        steps, it = ("steps", "it") if len(stuck) == 1 else ("step", "they")
        runner.logger.warning(
            f"{', '.join(stuck)} {steps} by epoch (by_epoch=True), but the train loop "
            f"{type(loop).__name__} is iteration-based (train_cfg by_epoch=False) and has no "
            f"epochs, so {it} never {steps} while training: set by_epoch=False (begin/end then "
            "count iterations) or convert_to_iter_based=True (begin/end stay in epochs)"
        )


def _warn_if_past_the_end(runner: Any) -> None:
    """Warn about each scheduler whose ``begin`` or ``end`` lies past the end of training
    (``train_cfg.max_epochs`` or ``max_iters``): it never acts, or its schedule stops part-way
    (a cosine's lr never reaches eta_min), and nothing else says so (MMEngine is silent). An
    end left out is the end of training, and INF (no end) has no last value to miss; those
    acting on validation metrics (ReduceOnPlateau) have none either. A fast_dev_run shortens
    training on purpose; a resumed run was warned of at its first start, and a resume names
    restored ends that differ from the config's itself."""
    from runnerx.runner.loops import EpochBasedTrainLoop, IterBasedTrainLoop

    loop = getattr(runner, "train_loop", None)
    if not isinstance(loop, (EpochBasedTrainLoop, IterBasedTrainLoop)):
        return
    if getattr(runner, "fast_dev_run", 0) or loop.iter > 0:
        return
    by_epochs = isinstance(loop, EpochBasedTrainLoop)
    for label, scheduler in _labelled(runner.param_schedulers):
        # an epoch-based one in an iteration-based loop: _warn_if_epochs_never_end's
        if getattr(scheduler, "need_val_args", False) or (scheduler.by_epoch and not by_epochs):
            continue
        message = _past_the_end(label, scheduler, loop, by_epochs)
        if message:
            runner.logger.warning(message)


def _warn_if_never_validated(runner: Any) -> None:
    """Warn about each scheduler that acts on validation metrics (ReduceOnPlateau) when no
    validation runs before training ends: without a val loop, with ``val_begin`` past the
    end, or with the only validation after the last epoch (iteration), as a ``val_interval``
    longer than the run leaves it. It then never changes its value, and MMEngine's would not
    either, without a word. A fast_dev_run validates only at its end on purpose."""
    from runnerx.runner.loops import EpochBasedTrainLoop, IterBasedTrainLoop

    waiting = [
        (label, scheduler)
        for label, scheduler in _labelled(runner.param_schedulers)
        if getattr(scheduler, "need_val_args", False)
    ]
    if not waiting:
        return
    loop = getattr(runner, "train_loop", None)
    if getattr(runner, "val_loop", None) is None:
        why = "this run has no validation (no val_dataloader, val_cfg and val_evaluator)"
        fix = "add validation whose metrics hold its monitor"
    elif isinstance(loop, (EpochBasedTrainLoop, IterBasedTrainLoop)):
        if getattr(runner, "fast_dev_run", 0):
            return
        total = loop.max_epochs if loop.unit == "epoch" else loop.max_iters
        first = loop.first_validation(total)
        # mid-epoch validations (val_check_interval) run in the epochs whose end validates
        if first is not None and (first < total or getattr(loop, "_val_check_batches", 0)):
            return
        if first is None:
            why = f"train_cfg.val_begin={loop.val_begin} is after the last {loop.unit} ({total})"
        else:
            why = (
                f"the only validation runs after the last {loop.unit} ({total}), once training "
                f"is over (train_cfg.val_begin={loop.val_begin}, "
                f"val_interval={loop.dynamic_intervals[0]})"
            )
        fix = "validate while training: lower train_cfg.val_begin or val_interval"
    else:
        return
    for label, scheduler in waiting:
        shown = (
            f"type={type(scheduler).__name__!r}, monitor={getattr(scheduler, 'monitor', None)!r}"
        )
        runner.logger.warning(
            f"{label} ({shown}) acts only after validations, on their metrics, but {why}: it "
            f"never changes the {getattr(scheduler, 'param_name', 'value')} (nor would "
            f"MMEngine's); {fix}, or use a schedule that needs no metrics"
        )


def _past_the_end(label: str, scheduler: Any, loop: Any, by_epochs: bool) -> str | None:
    """What :func:`_warn_if_past_the_end` says of one scheduler, None if it ends in time."""
    from runnerx.optim.scheduler.param_scheduler import INF

    begin, end, epochs = scheduler.begin, scheduler.end, loop.max_epochs
    per_epoch = loop.max_iters // epochs if by_epochs and not scheduler.by_epoch else 0
    if scheduler.by_epoch:
        length, limit = epochs, f"train_cfg.max_epochs={epochs}"
        fix = f"set {label}.end={epochs}"
    elif per_epoch:  # counted in iterations (by_epoch=False, or convert_to_iter_based=True)
        length = loop.max_iters
        limit = f"train_cfg.max_epochs={epochs} ({epochs} x {per_epoch} = {length} iterations)"
        fix = (
            f"set {label}.end={length} (by_epoch=False), or end={epochs} with "
            "convert_to_iter_based=True"
        )
    else:
        length = loop.max_iters
        limit, fix = f"train_cfg.max_iters={length}", f"set {label}.end={length}"

    def counted(step: float) -> str:  # the unit of ``step``, and epochs for iterations
        if scheduler.by_epoch:
            return "epochs"
        return (
            f"iterations: {step / per_epoch:g} epochs of {per_epoch}" if per_epoch else "iterations"
        )

    shown = f"{label} (type={type(scheduler).__name__!r})"
    if begin >= length:
        return (
            f"{shown} has begin={begin} ({counted(begin)}), at or past the end of training, "
            f"{limit}: it never acts; lower its begin, or remove it"
        )
    if end == INF or end <= length:
        return None
    return (
        f"{shown} has end={end} ({counted(end)}), past the end of training, {limit}: its "
        "schedule never finishes, so the value it sets never reaches its last one (the lr "
        f"never reaches a cosine's eta_min, a warmup never ends); {fix}, or leave end out "
        "(it defaults to the end of training)"
    )


def _flatten(param_schedulers: Any) -> list:
    return [scheduler for _, scheduler in _labelled(param_schedulers)]


def _labelled(param_schedulers: Any) -> list[tuple[str, Any]]:
    """``(config key, scheduler)`` for each scheduler: ``param_scheduler[0]``, or
    ``param_scheduler['generator'][0]`` for a dict of lists."""
    if param_schedulers is None:
        return []
    if isinstance(param_schedulers, (list, tuple)):
        return [(f"param_scheduler[{i}]", s) for i, s in enumerate(param_schedulers)]
    if isinstance(param_schedulers, dict) and "type" in param_schedulers:  # one config
        return [("param_scheduler", param_schedulers)]
    if isinstance(param_schedulers, dict):
        labelled = []
        for name, schedulers in param_schedulers.items():
            if not isinstance(schedulers, (list, tuple)):
                raise TypeError(
                    f"runner.param_schedulers[{name!r}] must be a list of schedulers, "
                    f"got {type(schedulers).__name__}"
                )
            labelled += [(f"param_scheduler[{name!r}][{i}]", s) for i, s in enumerate(schedulers)]
        return labelled
    raise TypeError(
        "runner.param_schedulers must be a list of schedulers, a dict of such lists (one per "
        f"optimizer) or None, got {type(param_schedulers).__name__}"
    )
