"""One training per work dir at a time: a second run (another tools/train.py, a Runner in this
process, two ranks) stops before its hooks with an error naming the first; the first finishes
unharmed; a killed holder, an interrupted training and Runners trained one after the other
leave the work dir free; a file system without locks trains unlocked."""

import errno
import fcntl
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest
import torch

from runnerx import Config
from runnerx.hooks import Hook
from runnerx.runner import Runner
from runnerx.runner import work_dir_lock as lock_module
from runnerx.runner.work_dir_lock import LOCK_FILE, WorkDirInUseError, work_dir_lock

ROOT = Path(__file__).parents[2]
FIX = "give another --work-dir (or work_dir=...)"

#: a hook that holds a run in its first iteration until a file appears
WAIT_HOOK = """
import json, os, time
from runnerx import HOOKS
from runnerx.hooks import Hook


@HOOKS.register_module()
class WaitInFirstIteration(Hook):
    def __init__(self, ready, gate):
        self.ready, self.gate = ready, gate

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.iter:
            return
        with open(self.ready + ".part", "w") as file:
            json.dump({"pid": os.getpid(), "log_dir": runner.log_dir}, file)
        os.replace(self.ready + ".part", self.ready)
        deadline = time.monotonic() + 60
        while not os.path.exists(self.gate):
            if time.monotonic() > deadline:
                raise TimeoutError("the test never opened the gate")
            time.sleep(0.05)
"""

#: a process that holds a work dir's lock (as a training does) until it is killed
HOLDER = """
import logging, sys, time
from runnerx.runner.work_dir_lock import work_dir_lock
with work_dir_lock(sys.argv[1], sys.argv[2], logging.getLogger()):
    print("holding", flush=True)
    time.sleep(60)
"""


def short_training(cfg: Config) -> Config:
    """``cfg`` training 3 iterations, saving after each, validating at the end."""
    cfg.train_cfg = dict(by_epoch=False, max_iters=3, val_interval=10)
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=1)
    return cfg


def log_text(runner: Runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def files_under(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


class RecordPoints(Hook):
    """Records the hook points a run reached."""

    def __init__(self) -> None:
        self.points: list[str] = []

    def before_run(self, runner) -> None:
        self.points.append("before_run")

    def before_train(self, runner) -> None:
        self.points.append("before_train")


@pytest.fixture
def first_run(tmp_path):
    """tools/train.py training in ``tmp_path/work``, held in its first iteration (lock taken)
    until the test calls ``release()``; yields (the process, what it wrote when it got there:
    pid and log_dir, the config file, release)."""
    (tmp_path / "wait_hook.py").write_text(WAIT_HOOK)
    ready, gate = tmp_path / "ready.json", tmp_path / "gate"
    config = tmp_path / "held.py"
    config.write_text(
        f"_base_ = [{str(ROOT / 'configs/digits_convnet.py')!r}]\n"
        "custom_imports = dict(imports=['wait_hook'], allow_failed_imports=False)\n"
        f"custom_hooks = [dict(type='WaitInFirstIteration', ready={str(ready)!r}, "
        f"gate={str(gate)!r})]\n"
        "train_cfg = dict(_delete_=True, by_epoch=False, max_iters=3, val_interval=10)\n"
        "param_scheduler = []\n"
        "default_hooks = dict(checkpoint=dict(by_epoch=False, interval=1))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    command = [sys.executable, "tools/train.py", str(config), "--work-dir", str(tmp_path / "work")]
    with open(tmp_path / "first.out", "w") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"the first run never trained:\n{(tmp_path / 'first.out').read_text()}")
        time.sleep(0.05)
    try:
        yield process, json.loads(ready.read_text()), config, gate.touch
    finally:
        gate.touch()
        process.kill()
        process.wait()


def test_a_second_training_in_a_busy_work_dir_stops_and_the_first_finishes(
    tmp_path, first_run, run_in_repo, digits_cfg
):
    process, first, config, release = first_run
    work = tmp_path / "work"
    before = files_under(work)

    command = [sys.executable, "tools/train.py", str(config), "--work-dir", str(work)]
    changed = ["--cfg-options", "optim_wrapper.optimizer.lr=0.05"]  # its config dump would differ
    second = run_in_repo([*command, *changed], env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert second.returncode == 1
    log_file = os.path.join(first["log_dir"], f"{os.path.basename(first['log_dir'])}.log")
    console = (second.stdout + second.stderr).splitlines()  # logged: the console is stdout
    assert not [line for line in console if "Traceback" in line]  # the message says it all
    (error,) = [line for line in console if "WorkDirInUseError: " in line]
    assert f" - train failed: WorkDirInUseError: work_dir '{work}'" in error
    assert f"in use by another run (pid {first['pid']} on {socket.gethostname()}, " in error
    assert f"log {log_file}); {FIX}" in error
    assert not list(work.glob("*.pth"))  # the second run saved nothing
    dumped = work / "held.py"
    kept = f"{dumped} stays the config of the run training there (pid {first['pid']} on "
    assert any(kept in line for line in console)

    # a Runner in this process stops too, before its hooks and before loading its checkpoint
    digits_cfg.work_dir = str(work)
    digits_cfg.load_from = str(tmp_path / "not_there.pth")  # loading it would raise
    runner = Runner.from_cfg(short_training(digits_cfg))
    recorder = RecordPoints()
    runner.register_hook(recorder)
    with pytest.raises(WorkDirInUseError, match=f"pid {first['pid']} on "):
        runner.train()
    assert recorder.points == []
    # nothing of the first run changed, its config dump included
    after = files_under(work)
    assert {name: after[name] for name in before} == before

    release()
    assert process.wait(timeout=120) == 0, (tmp_path / "first.out").read_text()
    assert sorted(p.name for p in work.glob("*.pth")) == ["iter_2.pth", "iter_3.pth"]
    assert (work / "last_checkpoint").read_text().strip() == str(work / "iter_3.pth")
    assert "accuracy/top1: " in Path(log_file).read_text()  # validated after training


def test_a_killed_holder_leaves_a_lock_the_next_training_takes(tmp_path, digits_cfg):
    work = tmp_path / "work"
    work.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(work), "holder.log"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "holding"
    held = json.loads((work / LOCK_FILE).read_text())
    assert held["pid"] == holder.pid
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    holder.stdout.close()

    runner = Runner.from_cfg(short_training(digits_cfg))
    runner.train()
    assert runner.iter == 3
    taken = json.loads((work / LOCK_FILE).read_text())
    assert taken["pid"] == os.getpid()
    assert taken["log"] == os.path.join(runner.log_dir, f"{runner.timestamp}.log")


def test_runners_trained_one_after_the_other_in_one_work_dir(digits_cfg):
    cfg = short_training(digits_cfg)
    first, second = Runner.from_cfg(cfg), Runner.from_cfg(cfg)
    first.train()
    second.train()
    assert (first.iter, second.iter) == (3, 3)
    second.val()  # val/test take no lock, also while a training holds it
    with work_dir_lock(second.work_dir, "other.log", second.logger):
        assert "accuracy/top1" in first.val()


@pytest.mark.parametrize("stop", [KeyboardInterrupt, RuntimeError])
def test_a_training_that_stops_with_an_error_frees_the_work_dir(digits_cfg, stop):
    class Stop(Hook):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            raise stop("stopped in the first iteration")

    runner = Runner.from_cfg(short_training(digits_cfg))
    runner.register_hook(Stop())
    with pytest.raises(stop):
        runner.train()
    again = Runner.from_cfg(short_training(digits_cfg))
    again.train()
    assert again.iter == 3


def refuse(fd, operation):
    raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))


#: fcntl on a network file system that refuses flock
NO_LOCKS = types.SimpleNamespace(LOCK_EX=fcntl.LOCK_EX, LOCK_NB=fcntl.LOCK_NB, flock=refuse)


@pytest.mark.parametrize("fcntl_stand_in, warned", [(NO_LOCKS, 1), (None, 0)])  # None: Windows
def test_training_goes_on_unlocked_where_locks_are_refused(
    digits_cfg, monkeypatch, fcntl_stand_in, warned
):
    monkeypatch.setattr(lock_module, "fcntl", fcntl_stand_in)
    runner = Runner.from_cfg(short_training(digits_cfg))
    runner.train()
    assert runner.iter == 3
    text = log_text(runner)
    assert text.count(f"cannot lock {runner.work_dir}/{LOCK_FILE} (No locks available;") == warned


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    cfg = short_training(Config.fromfile(ROOT / "configs/digits_convnet.py"))
    cfg.work_dir = out_dir
    cfg.launcher = "pytorch"
    runner = Runner.from_cfg(cfg)
    recorder = RecordPoints()
    runner.register_hook(recorder)
    try:
        runner.train()
    except Exception as error:
        return type(error).__name__, str(error), recorder.points
    return None


def test_two_ranks_stop_together_when_the_work_dir_is_in_use(tmp_path, spawn_ranks):
    with work_dir_lock(str(tmp_path), "holder.log", logging.getLogger(__name__)):
        outcomes = spawn_ranks(run_rank, tmp_path, 2, timeout=120)
    in_use = f"work_dir '{tmp_path}' is in use by another run (pid {os.getpid()} on "
    (kind, message, points), (other_kind, other_message, other_points) = outcomes
    assert kind == "WorkDirInUseError" and message.startswith(in_use) and FIX in message
    assert other_kind == "RuntimeError"
    assert other_message.startswith(
        f"taking the work_dir lock failed on rank 0: WorkDirInUseError: {in_use}"
    )
    assert points == other_points == []
