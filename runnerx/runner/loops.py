"""The loops: epoch- and iteration-based training here; validation and test live in
:mod:`runnerx.runner.eval_loops` and are imported here too, the path they have always had.

``train_cfg=dict(by_epoch=True, max_epochs=12, val_interval=1)`` picks EpochBasedTrainLoop,
``train_cfg=dict(by_epoch=False, max_iters=10000, val_interval=1000)`` IterBasedTrainLoop, and
``type=...`` any registered loop. The per-iteration path is short on purpose: hooks are called
through lists prepared once (only hooks that implement a point are on its list), and the
model is put in train mode once per epoch, not per iteration.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import GeneratorType
from typing import Any

import torch

from runnerx.config.config_dict import keyed_copy
from runnerx.data.build import length_of
from runnerx.data.samplers import InfiniteSampler
from runnerx.registry import LOOPS

from .base_loop import BaseLoop, refuse_uneven_batches
from .batch_limits import FirstBatches, limited
from .eval_loops import TestLoop, ValLoop, build_eval_loop
from .infinite_iterator import _InfiniteDataloaderIterator  # noqa: F401 (MMEngine's path)
from .train_data import TrainDataPosition
from .val_checks import MidEpochValidation, is_val_check
from .val_schedule import ValidationSchedule

__all__ = [
    "BaseLoop",
    "EpochBasedTrainLoop",
    "IterBasedTrainLoop",
    "TestLoop",
    "ValLoop",
    "build_eval_loop",
    "build_train_loop",
]

_UNSET = object()


def build_train_loop(runner: Any, dataloader: Any, loop_cfg: dict) -> Any:
    """The training loop ``train_cfg`` asks for: ``type=...`` or ``by_epoch=True/False``."""
    loop_cfg = keyed_copy(loop_cfg, "train_cfg")
    if "type" in loop_cfg and "by_epoch" in loop_cfg:  # MMEngine refuses it too
        raise RuntimeError(
            "train_cfg has both type and by_epoch: give one of them, e.g. "
            "type='EpochBasedTrainLoop' or by_epoch=True"
        )
    if "type" not in loop_cfg:
        by_epoch = loop_cfg.pop("by_epoch", _UNSET)
        if by_epoch is _UNSET:
            raise KeyError(
                f"train_cfg needs type=... or by_epoch=True/False: {_loop_hint(loop_cfg)}"
            )
        loop_cfg["type"] = EpochBasedTrainLoop if by_epoch else IterBasedTrainLoop
    return LOOPS.build(loop_cfg, default_args={"runner": runner, "dataloader": dataloader})


def _loop_hint(loop_cfg: dict) -> str:
    """What to add to a ``train_cfg`` that names no loop, going by the length it gives."""
    if "max_epochs" in loop_cfg:
        return "it has max_epochs, so add by_epoch=True (or type='EpochBasedTrainLoop')"
    if "max_iters" in loop_cfg:
        return "it has max_iters, so add by_epoch=False (or type='IterBasedTrainLoop')"
    return (
        "add by_epoch=True with max_epochs=N, by_epoch=False with max_iters=N, or "
        "type='MyLoop' for a registered loop"
    )


class _TrainLoop(TrainDataPosition, ValidationSchedule, BaseLoop):
    """What the two training loops share: counters, stopping, validation, one iteration."""

    unit = "epoch"  # what val_interval counts

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        length: tuple[str, int],
        val_begin: int,
        val_interval: int,
        dynamic_intervals: list[tuple[int, int]] | None,
    ) -> None:
        super().__init__(runner, dataloader)
        name, value = length
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"train_cfg.{name} must be a positive int, got {value!r}")
        self._epoch = 0
        self._iter = 0
        self._init_val_schedule(val_begin, val_interval, dynamic_intervals)
        self.stop_training = False  # ends training after this iteration (epoch end, val run)
        self._stop_now = False
        self._pass_start_iter = 0  # the iteration at which the current pass over the data began
        self._resume_batches = 0  # batches of the current pass done before a resume
        # the loops' own run() asks again after before_train; a subclass's run() that does
        # not (MMEngine's custom loops call run_iter directly) uses the hooks of now
        self.refresh_hooks()

    @property
    def stop_now(self) -> bool:
        """Set by a hook to end training at this iteration boundary, the epoch unfinished and
        not validated (PreemptionHook's stop); setting it sets ``stop_training`` too, so that
        both loops end whichever a custom hook sets."""
        return self._stop_now

    @stop_now.setter
    def stop_now(self, value: bool) -> None:
        self._stop_now = value
        if value:
            self.stop_training = True

    @property
    def max_epochs(self) -> int:
        """Epochs to train (1 for iteration-based training, which counts iterations)."""
        return self._max_epochs

    @property
    def max_iters(self) -> int:
        """Iterations the whole run takes."""
        return self._max_iters

    @property
    def epoch(self) -> int:
        """Finished epochs."""
        return self._epoch

    @property
    def iter(self) -> int:
        """Finished iterations."""
        return self._iter

    def run_iter(self, idx: int, data_batch: Any) -> None:
        """One training iteration: hooks before, ``train_step``, hooks after."""
        runner = self._runner  # not the property: a frame less per iteration
        # keywords, as MMEngine passes them: a hook may take (runner, **kwargs)
        for hook in self._before_iter:
            hook(runner, batch_idx=idx, data_batch=data_batch)
        outputs = runner.model.train_step(data_batch, optim_wrapper=runner.optim_wrapper)
        for hook in self._after_iter:
            hook(runner, batch_idx=idx, data_batch=data_batch, outputs=outputs)
        self._iter += 1

    def apply_fast_dev_run(self, batches: int) -> None:
        """Shorten the run to one pass of at most ``batches`` iterations, validated once at its
        end whatever ``val_begin`` and ``val_interval`` say (``fast_dev_run``)."""
        # from the last epoch (iteration) on: the run's end is always due, nothing before it
        self.val_begin = self._shorten(batches)

    def refresh_hooks(self) -> None:
        """Ask the hooks again which act before and after each iteration: done after
        ``before_train`` (where hooks settle their points for the run), and by a hook whose
        work ends mid-run (a finished ProfilerHook), so that it is not called any more."""
        self._before_iter = self.runner.hook_methods("before_train_iter", fresh=True)
        self._after_iter = self.runner.hook_methods("after_train_iter", fresh=True)


@LOOPS.register_module()
class EpochBasedTrainLoop(MidEpochValidation, _TrainLoop):
    """Train for ``max_epochs`` passes over the data, validating every ``val_interval`` epochs
    from epoch ``val_begin`` on (and after the last epoch). ``dynamic_intervals=[(280, 1)]``
    validates every epoch from epoch 280 on (MMEngine's argument, as RTMDet configs use it).

    MMEngine documents that rule but its loops look one epoch (iteration) ahead, so they
    switch one early: after epoch 279 in that example, and with ``val_interval=3,
    dynamic_intervals=[(4, 1), (6, 2)]`` they skip epoch 5. That contradicts its own docs, so
    runnerx follows the docs. During epoch N, hooks see N's ``val_interval``, as in MMEngine.

    ``limit_batches=N`` (or a share of the epoch such as ``0.25``) ends each epoch after its
    first batches (Lightning's ``limit_train_batches``); the epoch length that schedulers,
    hooks and the log see is the limited one.

    ``val_check_interval=0.25`` (a share of the epoch) or ``=200`` (batches) also validates
    part-way through each epoch whose end-of-epoch validation is due (Lightning's
    ``val_check_interval``, see :mod:`runnerx.runner.val_checks`); hooks see the finished
    epochs and iterations then, as at an epoch end. When a hook sets ``stop_training`` in
    such a validation (EarlyStoppingHook), the epoch ends there (``after_train_epoch`` runs
    and counts it, as when a hook stops training mid-epoch) and is not validated again."""

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        max_epochs: int,
        val_begin: int = 1,
        val_interval: int = 1,
        dynamic_intervals: list[tuple[int, int]] | None = None,
        limit_batches: int | float | None = None,
        val_check_interval: int | float | None = None,
    ) -> None:
        super().__init__(
            runner,
            dataloader,
            ("max_epochs", max_epochs),
            val_begin,
            val_interval,
            dynamic_intervals,
        )
        if isinstance(self._sampler(), InfiniteSampler):
            raise ValueError(
                "train_dataloader.sampler is InfiniteSampler, which never ends an epoch, but "
                f"train_cfg is epoch-based (EpochBasedTrainLoop, max_epochs={max_epochs}): use "
                "sampler=dict(type='DefaultSampler', shuffle=True), or train by iterations: "
                "train_cfg=dict(by_epoch=False, max_iters=...)"
            )
        self.dataloader = limited(self.dataloader, limit_batches, "train_cfg.limit_batches")
        self._max_epochs = max_epochs
        self._max_iters = max_epochs * length_of(
            self.dataloader,
            "train_dataloader",
            ", or train by iterations, which needs no length: "
            f"train_cfg=dict(by_epoch=False, max_iters=...) instead of max_epochs={max_epochs}",
        )
        self.set_val_check_interval(val_check_interval)

    def _shorten(self, batches: int) -> int:
        self.dataloader = FirstBatches(self.dataloader, batches)  # one pass of that many
        self._max_epochs, self._max_iters = 1, len(self.dataloader)
        self._val_check_batches = 0  # one validation, at the end (as Lightning's fast_dev_run)
        return 1

    def validation_follows(self) -> bool:
        """Whether a validation runs right after the iteration in progress (at the epoch's
        end, or a mid-epoch check), for hooks in ``after_train_iter``: PreemptionHook settles
        a stop signal before it."""
        length = len(self.dataloader)
        done = self._iter + 1 - self._pass_start_iter  # batches of the epoch after this one
        if done < length and not is_val_check(done, self._val_check_batches, length):
            return False
        return self._validates_after(self._epoch + 1, self._max_epochs)

    @property
    def resume_batches(self) -> int:
        """As the base class, but none for a subclass whose own ``run_epoch`` reads the data
        itself (MMEngine's body, ``enumerate(self.dataloader)``): it starts the epoch over."""
        run_epoch = type(self).run_epoch
        names = getattr(getattr(run_epoch, "__code__", None), "co_names", ())
        own_reading = run_epoch is not EpochBasedTrainLoop.run_epoch and not (
            {"run_epoch", "_batches"} & set(names)  # one calling super().run_epoch() skips
        )
        return 0 if own_reading else self._resume_batches

    def resume_data_position(self, position: dict) -> None:
        """As the base class; a position outside this epoch (and not the end of the one
        before), as an iteration-based loop saves after its first pass, is dropped with a
        warning: the epoch starts at its first batch."""
        super().resume_data_position(position)
        saved_pass = position.get("epoch", self._epoch)
        in_epoch = saved_pass == self._epoch and self._resume_batches <= len(self.dataloader)
        if in_epoch or saved_pass == self._epoch - 1:
            return
        self._resume_batches, epoch, length = 0, self._epoch + 1, len(self.dataloader)
        ends_at = self._iter + (self._max_epochs - self._epoch) * length
        self.runner.logger.warning(
            f"resume: the checkpoint's training data stood {position.get('batches', 0)} "
            f"batches into pass {saved_pass + 1}, which is not in epoch {epoch} of this "
            "epoch-based loop (an iteration-based loop counts passes, not epochs): epoch "
            f"{epoch} starts at its first batch and the iterations count on from {self._iter}, "
            f"so the run ends after {self._iter} + {self._max_epochs - self._epoch} x {length} "
            f"= {ends_at} iterations"
        )

    def run(self) -> torch.nn.Module:
        """Train until ``max_epochs`` (or until a hook sets ``stop_training``)."""
        runner = self.runner
        self._check_val_schedule(self._max_epochs)
        self._check_same_epoch_length()
        runner.call_hook("before_train")
        self.refresh_hooks()
        self._catch_up_validation(self._epoch, self._max_epochs)
        while self._epoch < self._max_epochs and not self.stop_training:
            self._settle_val_interval(self._epoch + 1)  # what hooks see during the epoch
            # what run_epoch sets, set here too for a subclass's own run_epoch: else the data
            # position its checkpoints save counts the batches of every epoch so far
            self._pass_start_iter = self._iter - self._resume_batches
            self.run_epoch()
            if not self.stop_now:  # the epoch ended: the next one starts here
                self._pass_start_iter, self._resume_batches = self._iter, 0
            if self._validated_mid_epoch_at != self._iter:  # else stopped right after one
                self._validate_if_due(self._epoch, self._max_epochs)
        runner.call_hook("after_train")
        return runner.model

    def _check_same_epoch_length(self) -> None:
        """Refuse epochs of another length on each rank (e.g. a dataset each rank reads for
        itself): the ranks would wait for each other forever at the shortest one's end."""
        refuse_uneven_batches(
            self.dataloader,
            "train_dataloader",
            "they would wait for each other forever at the end of the shortest epoch",
            "give every rank the same dataset (DefaultSampler splits it between them)",
        )

    def run_epoch(self) -> None:
        """One pass over the training data."""
        runner = self.runner
        runner.call_hook("before_train_epoch")
        runner.model.train()
        batches = self._batches()
        check_at = self._first_val_check()
        for idx, data_batch in batches:
            self.run_iter(idx, data_batch)
            if idx == check_at:  # -1 when no mid-epoch validation is left in this epoch
                check_at = self._val_check(idx)
            if self.stop_training:  # stop_now sets it too
                break
        if self.stop_now:
            return
        done, length = self.pass_batches_done, len(self.dataloader)
        if self.stop_training and done < length:  # MMEngine's loop finishes the epoch
            runner.logger.info(
                f"training stopped early (a hook set stop_training) at iteration {self._iter}, "
                f"after batch {done} of {length} of epoch {self._epoch + 1}, which counts as "
                "done"
            )
        elif done < length:  # the loader ran dry: an iterable dataset that yields fewer
            runner.logger.warning(
                f"train_dataloader yielded {done} of the {length} batches len() gives it in "
                f"epoch {self._epoch + 1} (at iteration {self._iter}): its dataset yields fewer "
                "samples than its __len__ says (an IterableDataset, say), so the epoch ends "
                "early; max_iters, the schedulers and the log's ETA count len()'s batches"
            )
        runner.call_hook("after_train_epoch")
        self._epoch += 1
        # the next pass starts here: a checkpoint saved before it does (the periodic one saved
        # again for a new best, after validation) must not skip its batches when resumed
        self._pass_start_iter = self._iter


@LOOPS.register_module()
class IterBasedTrainLoop(_TrainLoop):
    """Train for ``max_iters`` iterations, cycling through the data, validating every
    ``val_interval`` iterations from iteration ``val_begin`` on (and after the last one);
    ``dynamic_intervals=[(milestone, interval), ...]`` changes the interval from each
    milestone iteration on."""

    unit = "iteration"
    default_sampler = {"type": "InfiniteSampler", "shuffle": True}

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        max_iters: int,
        val_begin: int = 1,
        val_interval: int = 1000,
        dynamic_intervals: list[tuple[int, int]] | None = None,
        limit_batches: int | float | None = None,
        val_check_interval: int | float | None = None,
    ) -> None:
        # keys of the epoch-based loop, taken to say what to set instead
        refuse_without_epochs(
            "val_check_interval",
            val_check_interval,
            "validates part-way through each epoch",
            "set train_cfg.val_interval to the iterations between validations instead",
        )
        refuse_without_epochs(
            "limit_batches",
            limit_batches,
            "limits the batches of each epoch",
            "lower train_cfg.max_iters instead",
        )
        super().__init__(
            runner,
            dataloader,
            ("max_iters", max_iters),
            val_begin,
            val_interval,
            dynamic_intervals,
        )
        self._max_iters = max_iters
        self._max_epochs = 1
        # passes over the data begun before the current one (the sampler's epoch); the
        # loop's epoch stays 0, as in MMEngine, so epoch-based hooks and logs count one epoch
        self._passes = 0
        #: the endless stream of training batches (MMEngine's attribute, which custom loops
        #: read with ``next(self.dataloader_iterator)``); it starts reading on the first
        #: ``next``, so a resume made after the loop was built is taken into account
        self.dataloader_iterator = self._endless_batches()

    def _data_pass(self) -> int:
        return self._passes

    def _shorten(self, batches: int) -> int:
        self._max_iters = min(batches, self._max_iters)
        return self._max_iters

    def validation_follows(self) -> bool:
        """Whether a validation runs right after the iteration in progress, for hooks in
        ``after_train_iter``: PreemptionHook settles a stop signal before it."""
        return self._validates_after(self._iter + 1, self._max_iters)

    def resume_data_position(self, position: dict) -> None:
        """Continue the data stream in the pass (sampler epoch) ``position`` was saved in,
        saying so for a checkpoint that counts epochs (an epoch-based loop's)."""
        self._passes = int(position.get("epoch", 0))
        super().resume_data_position(position)
        if self._epoch:
            self.runner.logger.info(
                f"resume: the checkpoint is at epoch {self._epoch}, as an epoch-based loop "
                f"counts; this iteration-based loop counts on from iteration {self._iter} to "
                f"max_iters={self._max_iters}, the training data continuing after batch "
                f"{self._resume_batches} of pass {self._passes + 1}"
            )

    def run(self) -> torch.nn.Module:
        """Train until ``max_iters`` (or until a hook sets ``stop_training``)."""
        runner = self.runner
        self._check_val_schedule(self._max_iters)
        runner.call_hook("before_train")
        self.refresh_hooks()
        runner.call_hook("before_train_epoch")
        runner.model.train()
        self._catch_up_validation(self._iter, self._max_iters)
        try:
            while self._iter < self._max_iters and not self.stop_training:
                self.run_iter(next(self.dataloader_iterator))
                self._validate_if_due(self._iter, self._max_iters)
        finally:
            # The stream stops mid-pass, holding a DataLoader iterator: its worker processes,
            # left to the garbage collector, stall it 5 s each. Closing it stops them now;
            # a later run() starts a new pass. (A subclass may have put its own in its place.)
            if isinstance(self.dataloader_iterator, GeneratorType):
                self.dataloader_iterator.close()
                self.dataloader_iterator = self._endless_batches()
        runner.call_hook("after_train_epoch")
        runner.call_hook("after_train")
        return runner.model

    def run_iter(self, data_batch: Any) -> None:  # type: ignore[override]
        """One training iteration on ``data_batch``, numbered by the iteration count: MMEngine's
        signature for this loop, which a subclass may override or call."""
        super().run_iter(self._iter, data_batch)

    def _endless_batches(self) -> Iterator[Any]:
        # Each new pass over a finite sampler gets the next epoch's order, as MMEngine does.
        sampler = getattr(self.dataloader, "sampler", None)
        can_set_epoch = hasattr(sampler, "set_epoch")
        if self._passes and can_set_epoch:  # resumed in a later pass
            sampler.set_epoch(self._passes)
        empty_passes = 0
        while True:
            start = self._iter  # at the pass's end, every batch it gave has been trained on
            for _, data_batch in self._batches():
                yield data_batch
            # one empty pass is a resume at a pass's end; two would spin here for ever
            empty_passes = empty_passes + 1 if self._iter == start else 0
            if empty_passes == 2:
                raise RuntimeError(
                    f"train_dataloader gave no batch in a whole pass (pass {self._passes + 1}, "
                    f"at iteration {self._iter}): an iteration-based loop reads its data again "
                    "and again, so the dataset must not be empty, and an IterableDataset's "
                    "__iter__ must start a new pass each time it is called (not go on with a "
                    "used-up generator)"
                )
            self._passes += 1
            if can_set_epoch:
                sampler.set_epoch(self._passes)


def refuse_without_epochs(key: str, value: Any, does: str, instead: str) -> None:
    """The error for ``train_cfg.<key>``, which ``does`` something to each epoch, given to an
    iteration-based loop, which has none: what to set ``instead``."""
    if value is not None:
        raise ValueError(
            f"train_cfg.{key}={value!r} {does}, but an iteration-based loop (by_epoch=False) "
            f"has no epochs: {instead}"
        )
