"""Crash safety: a training process that saves an 8 MB checkpoint after every iteration is
SIGKILLed at random moments, most of them in the middle of a save (rounds go on until one
was). After every kill each checkpoint in the folder loads completely, ``last_checkpoint``
names a complete one, the 3 newest (max_keep_ckpts) up to it are all there, and the next run
removes the half-written temporary files, resumes from ``last_checkpoint`` and goes on.
A checkpoint whose background write fails (a full disk at the rename) stops the run at the
next save, and nothing that relies on it happens: no older one is removed, and
``last_checkpoint`` never names it. A run that fails still writes out the TensorBoard
scalars it logged."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from runnerx.checkpoint import load_checkpoint
from runnerx.fileio import wait_for_pending_writes
from runnerx.hooks import Hook
from runnerx.runner.work_dir_lock import LOCK_FILE

WRITER = Path(__file__).with_name("checkpoint_writer.py")
MAX_KEEP_CKPTS = 3  # as in the writer
ROUNDS, MAX_ROUNDS = 5, 10


def start_writer(work_dir: Path, log: Path) -> tuple[subprocess.Popen, int]:
    """Start a run; return it and the iteration it started from, once it is training."""
    process = subprocess.Popen(
        [sys.executable, str(WRITER), str(work_dir)],
        stdout=subprocess.PIPE,
        stderr=log.open("a"),
        text=True,
    )
    for line in process.stdout:
        found = re.match(r"training from iteration (\d+)", line)
        if found:
            return process, int(found[1])
    process.wait()
    raise AssertionError(f"the writer stopped before training:\n{log.read_text()[-4000:]}")


def check_after_kill(work_dir: Path) -> tuple[int, list[Path]]:
    """Assert what a kill must leave; return the iteration of the checkpoint
    ``last_checkpoint`` names (0 for none) and the partly written (temporary) files."""
    names = os.listdir(work_dir)
    complete = {}
    for name in names:
        found = re.fullmatch(r"iter_(\d+)\.pth", name)
        if found:
            checkpoint = load_checkpoint(work_dir / name)  # loads completely
            assert checkpoint["meta"]["iter"] == int(found[1])
            assert checkpoint["state_dict"]["table"].shape == (2048, 1024)
            assert checkpoint["optimizer"]["state"][0]["momentum_buffer"].shape == (64, 64)
            complete[int(found[1])] = name
    pointer = work_dir / "last_checkpoint"
    step = 0
    if pointer.exists():
        newest = Path(pointer.read_text())
        assert newest.is_file(), f"last_checkpoint names {newest}, which is not there"
        step = int(re.fullmatch(r"iter_(\d+)\.pth", newest.name)[1])
        expected = set(range(max(1, step - MAX_KEEP_CKPTS + 1), step + 1))
        assert expected <= set(complete), f"after iter_{step}: only {sorted(complete)}"
    else:
        assert not complete, "checkpoints were written but last_checkpoint was not"
    # dot-files are half-written checkpoints; the work-dir lock stays after a run by design
    return step, [work_dir / name for name in names if name.startswith(".") and name != LOCK_FILE]


def test_a_killed_run_leaves_only_complete_checkpoints_and_resumes(tmp_path):
    work_dir, log = tmp_path / "work", tmp_path / "writer.log"
    delays = random.Random(0)
    saved, partial = 0, []
    kills_during_a_save = 0
    for round_index in range(MAX_ROUNDS):
        if round_index >= ROUNDS and kills_during_a_save:
            break
        process, start = start_writer(work_dir, log)
        assert start == saved  # resumed from the checkpoint last_checkpoint names
        assert not [path for path in partial if path.exists()]  # the new run cleaned up
        time.sleep(delays.uniform(0.1, 0.5))
        process.kill()
        process.wait()
        saved, partial = check_after_kill(work_dir)
        kills_during_a_save += bool(partial)
    assert saved > 0
    assert kills_during_a_save >= 1, "no kill hit a save in progress: saves too fast?"


class FullDiskFor(Hook):
    """From the start, putting the checkpoint ``name`` in place fails as on a full disk (in
    the writer thread's rename); before each epoch, waits for the writer, so that the next
    save comes after the failure."""

    def __init__(self, name: str, monkeypatch) -> None:
        real = os.replace

        def replace(src, dst, *args, **kwargs):
            if os.path.basename(dst) == name:
                raise OSError(28, "No space left on device")
            return real(src, dst, *args, **kwargs)

        monkeypatch.setattr(os, "replace", replace)

    def before_train_epoch(self, runner) -> None:
        wait_for_pending_writes(raise_errors=False)


@pytest.mark.parametrize(
    ("checkpoint", "failing", "left", "named"),
    [
        # the periodic epoch_2.pth fails: epoch_1.pth stays (max_keep_ckpts=1) and is named
        ({"interval": 1, "max_keep_ckpts": 1}, "epoch_2.pth", ["epoch_1.pth"], "epoch_1.pth"),
        # the second best fails: the first stays (it was the one to go), the run stops when
        # epoch 3's validation would save a best one
        (
            {"interval": 10, "save_best": "scripted/score", "rule": "greater"},
            "best_scripted_score_epoch_2.pth",
            ["best_scripted_score_epoch_1.pth"],
            None,
        ),
    ],
)
def test_a_failed_background_write_stops_the_run_at_the_next_save_and_removes_nothing(
    make_runner, monkeypatch, checkpoint, failing, left, named
):
    runner = make_runner(
        max_epochs=4,
        default_hooks={"logger": None, "checkpoint": {"type": "CheckpointHook", **checkpoint}},
        scores=[0.5, 0.6, 0.7, 0.8],
        custom_hooks=[FullDiskFor(failing, monkeypatch)],
    )
    work = runner.work_dir
    message = (
        f"writing the checkpoint {os.path.join(work, failing)} failed: "
        r"\[Errno 28\] No space left on device; nothing older was removed, and "
        + (f"last_checkpoint still names {os.path.join(work, named)}" if named else "no last_")
    )
    with pytest.raises(OSError, match=message):
        runner.train()
    assert runner.iter == 12  # stopped at the end of epoch 3, where the next save came
    assert sorted(name for name in os.listdir(work) if name.endswith(".pth")) == left
    assert [name for name in os.listdir(work) if name.startswith(".")] == [LOCK_FILE]
    pointer = Path(work, "last_checkpoint")
    assert not named or pointer.read_text() == os.path.join(work, named)


class InterruptAt(Hook):
    """Ctrl-C (or ``error``) after training iteration ``at``."""

    def __init__(self, at: int, error: BaseException) -> None:
        self.at, self.error = at, error

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if runner.iter + 1 == self.at:
            raise self.error


@pytest.mark.parametrize("error", [KeyboardInterrupt(), RuntimeError("broken")])
def test_a_failed_run_keeps_the_tensorboard_scalars_it_logged(make_runner, error):
    """TensorBoard's writer buffers events for up to two minutes: a run that fails (no
    after_run) still writes out the scalars it had logged."""
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    runner = make_runner(
        max_epochs=2,
        default_hooks={"logger": {"type": "LoggerHook", "interval": 1}, "checkpoint": None},
        visualizer={"type": "Visualizer", "vis_backends": [{"type": "TensorboardVisBackend"}]},
        custom_hooks=[InterruptAt(3, error)],
    )
    with pytest.raises(type(error)):
        runner.train()
    # closed: written out now, not when (or if) the writer's thread gets to it before exit
    assert runner.visualizer.get_backend("TensorboardVisBackend")._writer is None
    events = event_accumulator.EventAccumulator(str(Path(runner.log_dir, "vis_data")))
    events.Reload()
    assert [scalar.step for scalar in events.Scalars("loss")] == [1, 2]
