"""A failed background checkpoint write is reported to the Runner whose CheckpointHook queued
it: another Runner of the process waits for it but only logs a WARNING naming the file."""

from __future__ import annotations

import logging
import os

import pytest

from runnerx.fileio import wait_for_pending_writes
from runnerx.hooks import CheckpointHook


@pytest.fixture
def full_disk_for(monkeypatch):
    """``full_disk_for(name)``: putting a file of that name in place fails as on a full disk."""
    real = os.replace

    def fail_for(name: str) -> None:
        def replace(src, dst, *args, **kwargs):
            if os.path.basename(dst) == name:
                raise OSError(28, "No space left on device")
            return real(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", replace)

    yield fail_for
    monkeypatch.setattr(os, "replace", real)
    wait_for_pending_writes(raise_errors=False)


def test_a_hook_called_by_hand_fails_its_own_runner_not_the_next_one(
    make_runner, tmp_path, full_disk_for
):
    first = make_runner(work_dir=str(tmp_path / "first"), by_epoch=False)
    hook = CheckpointHook(interval=1, by_epoch=False)
    hook.before_train(first)
    full_disk_for("iter_1.pth")
    hook.after_train_iter(first, batch_idx=0)  # its write fails on the writer thread
    wait_for_pending_writes(raise_errors=False)
    failed = os.path.join(first.work_dir, "iter_1.pth")
    with pytest.raises(OSError, match=f"writing the checkpoint {failed} failed"):
        hook.after_train_iter(first, batch_idx=0)  # the first Runner's next save stops

    second = make_runner(work_dir=str(tmp_path / "second"), max_epochs=1)
    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    second.logger.addHandler(handler)
    try:
        second.train()  # not stopped by the first Runner's failure
    finally:
        second.logger.removeHandler(handler)
    assert second.iter == 4 and os.path.exists(os.path.join(second.work_dir, "epoch_1.pth"))
    [warning] = [message for message in warnings if "another Runner" in message]
    assert f"writing {failed} failed" in warning and "No space left on device" in warning
