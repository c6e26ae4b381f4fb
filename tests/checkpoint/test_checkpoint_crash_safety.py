"""Crash safety: a training process that saves an 8 MB checkpoint after every iteration is
SIGKILLed at random moments, most of them in the middle of a save (rounds go on until one
was). After every kill each checkpoint in the folder loads completely, ``last_checkpoint``
names a complete one, the 3 newest (max_keep_ckpts) up to it are all there, and the next run
removes the half-written temporary files, resumes from ``last_checkpoint`` and goes on."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

from runnerx.checkpoint import load_checkpoint
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
