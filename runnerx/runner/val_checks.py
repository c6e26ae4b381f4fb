"""``train_cfg.val_check_interval``: validate part-way through an epoch as well as at its end
(Lightning's ``Trainer(val_check_interval=...)``), for long epochs::

    train_cfg = dict(by_epoch=True, max_epochs=10, val_check_interval=0.25)  # 4 times an epoch
    train_cfg = dict(by_epoch=True, max_epochs=10, val_check_interval=200)   # every 200 batches

The epoch-based loop validates after every that many batches of an epoch, counted from the
epoch's start, in the epochs whose end-of-epoch validation is due (``val_begin``,
``val_interval``, ``dynamic_intervals``); a check that falls on the epoch's last batch is the
end-of-epoch validation. This module turns the key into a number of batches and finds the
next check, and :class:`MidEpochValidation` runs them in
:class:`~runnerx.runner.loops.EpochBasedTrainLoop`. The loop checks for one with a single
comparison per iteration (the batch index against the next check's, -1 when off).
"""

from __future__ import annotations

from typing import Any

#: MessageHub info: the iteration count at which a mid-epoch validation last began (saved in
#: checkpoints, so a resume knows whether the one at its iteration ran)
VALIDATED_MID_EPOCH_AT = "validated_mid_epoch_at"

_KEY = "train_cfg.val_check_interval"


def val_check_batches(value: Any, epoch_length: int) -> int:
    """The training batches between mid-epoch validations that ``value`` asks for, 0 for
    none: None (off), a float in (0, 1] (that share of the ``epoch_length`` batches, rounded
    down, at least 1) or an int from 1 to ``epoch_length``. An interval of a whole epoch
    (``1.0``, Lightning's default) leaves only the end-of-epoch validation, so it gives 0.
    Anything else is a ValueError naming the key."""
    if value is None:
        return 0
    if isinstance(value, float) and 0.0 < value <= 1.0:
        batches = max(1, int(epoch_length * value))
    elif isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        if value > epoch_length:
            raise ValueError(
                f"{_KEY}={value} is more than the {epoch_length} training batches of an "
                "epoch: give at most that many (or a share such as 0.25); to validate every "
                f"{value} iterations across epochs, train by iterations instead: "
                f"train_cfg=dict(by_epoch=False, max_iters=..., val_interval={value})"
            )
        batches = value
    else:
        raise ValueError(
            f"{_KEY} must be None (validate at epoch ends only), a float in (0, 1] (a share "
            "of each epoch, e.g. 0.25) or an int >= 1 (training batches between "
            f"validations, at most the {epoch_length} of an epoch), got {value!r}"
        )
    return 0 if batches >= epoch_length else batches


def next_val_check(done: int, every: int, epoch_length: int) -> int:
    """The index of the batch after which the next mid-epoch validation falls, once ``done``
    batches of the epoch are trained (-1: none left before the epoch's end)."""
    idx = (done // every + 1) * every - 1
    return idx if idx < epoch_length - 1 else -1


def is_val_check(done: int, every: int, epoch_length: int) -> bool:
    """Whether a mid-epoch validation falls right after the first ``done`` batches of an
    epoch (``every``: :func:`val_check_batches`, 0 for none)."""
    return bool(every) and 0 < done < epoch_length and done % every == 0


class MidEpochValidation:
    """The mid-epoch validations of the epoch-based training loop (a mixin of it: it uses
    the loop's counters, ``_is_due`` and ``_validate``). Each one is recorded in the
    MessageHub (``validated_mid_epoch_at``, saved in checkpoints), so that a resume from a
    checkpoint saved at the end of its iteration, before it ran, runs it first."""

    def set_val_check_interval(self, value: Any) -> None:
        """Settle ``train_cfg.val_check_interval`` against the (limited) epoch length."""
        self.val_check_interval = value
        self._val_check_batches = val_check_batches(value, len(self.dataloader))
        self._validated_mid_epoch_at = -1  # the iteration count at the last one
        #: True while a mid-epoch validation runs (hooks name what they save by iteration)
        self.validating_mid_epoch = False

    @property
    def val_check_batches(self) -> int:
        """Training batches between mid-epoch validations (0: at epoch ends only)."""
        return self._val_check_batches

    def _first_val_check(self) -> int:
        """The batch index of the epoch's next mid-epoch validation (after a resume, past
        the batches done), -1 when none: off, or the epoch's validation is not due."""
        every = self._val_check_batches
        if not (every and self._validates and self._is_due(self._epoch + 1, self._max_epochs)):
            return -1
        return next_val_check(self._iter - self._pass_start_iter, every, len(self.dataloader))

    def _val_check(self, idx: int) -> int:
        """Validate after batch ``idx`` and return the next check's index (-1: none). Not
        when a hook has just ended the epoch: its end validates, as without the checks."""
        if self.stop_training or self.stop_now:
            return -1
        self._validate_mid_epoch()
        return next_val_check(idx + 1, self._val_check_batches, len(self.dataloader))

    def _validate_mid_epoch(self, note: str | None = None) -> None:
        self._validated_mid_epoch_at = self._iter
        # before validating: checkpoints saved meanwhile (the best) record that it ran
        self.runner.message_hub.update_info(VALIDATED_MID_EPOCH_AT, self._iter)
        self.validating_mid_epoch = True
        try:
            self._validate(note)
        finally:
            self.validating_mid_epoch = False

    def _catch_up_validation(self, done: int, total: int) -> None:
        """After a resume, also run the mid-epoch validation that the checkpoint was saved
        before (at the end of the iteration it follows). A checkpoint of an epoch that a hook
        ended in a mid-epoch validation (EarlyStoppingHook) needs none: that validation was
        the epoch's last, and the unbroken run did not validate the epoch again."""
        resumed = self._catch_up
        at = self._iter
        ran_at = self.runner.message_hub.get_info(VALIDATED_MID_EPOCH_AT)
        if resumed and not self._resume_batches and ran_at == at:
            self.validated_at = done
        super()._catch_up_validation(done, total)
        if not (
            resumed
            and is_val_check(self._resume_batches, self._val_check_batches, len(self.dataloader))
            and ran_at != at
        ):
            return
        self._settle_val_interval(done + 1)
        if self._is_due(done + 1, total) and self.runner.val_loop is not None:
            note = (
                f"validating after iteration {at} first: a mid-epoch validation is due there "
                "under this config, and the checkpoint resumed from was saved before one ran"
            )
            self._validate_mid_epoch(note)
