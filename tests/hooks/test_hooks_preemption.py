"""PreemptionHook in one process: a stop signal saves a checkpoint at the next iteration
boundary and stops training; resuming from it ends where an uninterrupted run ends;
tools/train.py exits with the documented code, also when the whole job (DataLoader workers
included) is signalled; a second signal ends the process at once (the same one within 2 s
is the first delivered twice)."""

import functools
import multiprocessing
import os
import pickle
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, Dataset

from runnerx import HOOKS, Config
from runnerx.checkpoint.runner_state import find_latest_checkpoint
from runnerx.data.worker_init import LeaveSignalsToMain
from runnerx.hooks import PREEMPTED_EXIT_CODE, Hook, PreemptionHook, preempted_by
from runnerx.runner import Runner
from tests.checkpoint.conftest import TinyNet
from tests.checkpoint.tiny_data import loader

ROOT = Path(__file__).parents[2]


@HOOKS.register_module()
class SignalSelfAtIter(Hook):
    """Sends ``signal_name`` to this process during iteration ``at`` (1-based), as a
    scheduler would at any moment."""

    def __init__(self, at: int, signal_name: str = "SIGUSR1"):
        self.at = at
        self.signal_number = getattr(signal, signal_name)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            os.kill(os.getpid(), self.signal_number)


@HOOKS.register_module()
class WaitForMaxTimeAtIter(Hook):
    """During iteration ``at`` (on rank ``rank``, or on every rank), waits up to 30 s for
    PreemptionHook's max_time to run out, so that the stop falls at a known boundary."""

    def __init__(self, at: int, rank: int | None = None):
        self.at, self.rank = at, rank

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 != self.at or self.rank not in (None, runner.rank):
            return
        hook = next(hook for hook in runner.hooks if isinstance(hook, PreemptionHook))
        deadline = time.monotonic() + 30
        while hook.received is None and time.monotonic() < deadline:
            time.sleep(0.01)


def digits_cfg(work_dir: Path, **changes) -> Config:
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    # checkpoints at epoch ends only: the one a signal asks for is the only mid-epoch one
    cfg.merge_from_dict({"train_cfg.max_epochs": 2, "param_scheduler.1.end": 2})
    cfg.merge_from_dict(changes)
    return cfg


def weights(runner: Runner) -> dict:
    return {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}


@pytest.mark.parametrize("signal_name", ["SIGUSR1", "SIGTERM"])
def test_a_signal_saves_at_the_next_boundary_and_the_resumed_run_is_exact(tmp_path, signal_name):
    straight = Runner.from_cfg(digits_cfg(tmp_path / "straight"))
    straight.train()

    cfg = digits_cfg(tmp_path / "preempted")
    cfg.custom_hooks = [dict(type="SignalSelfAtIter", at=30, signal_name=signal_name)]
    before = signal.getsignal(signal.SIGUSR1)
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert preempted_by(runner) == signal_name
    assert runner.iter == 30  # stopped at the boundary after the iteration it came in
    checkpoint = find_latest_checkpoint(cfg.work_dir)
    assert checkpoint == os.path.join(cfg.work_dir, "iter_30.pth")
    assert signal.getsignal(signal.SIGUSR1) is before  # handlers given back after training

    resumed_cfg = digits_cfg(tmp_path / "preempted", resume=True)
    resumed = Runner.from_cfg(resumed_cfg)
    resumed.train()
    assert preempted_by(resumed) is None
    expected, actual = weights(straight), weights(resumed)
    for key, value in expected.items():
        assert torch.equal(value, actual[key]), f"{key} differs after resuming"


def test_max_time_saves_and_stops_at_the_next_boundary_and_the_resumed_run_is_exact(tmp_path):
    straight = Runner.from_cfg(digits_cfg(tmp_path / "straight"))
    straight.train()

    # 2 s is far more than the first 5 iterations take; iteration 5 waits until it has passed
    limited = {"default_hooks.preemption": dict(max_time=2)}
    cfg = digits_cfg(tmp_path / "limited", **limited)
    cfg.custom_hooks = [dict(type="WaitForMaxTimeAtIter", at=5)]
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert preempted_by(runner) == "max_time" and runner.iter == 5
    assert find_latest_checkpoint(cfg.work_dir) == os.path.join(cfg.work_dir, "iter_5.pth")
    (log_file,) = Path(cfg.work_dir).glob("*/*.log")
    assert "max_time (0:00:02) reached: saving a checkpoint at 5 iterations" in log_file.read_text()

    resumed = Runner.from_cfg(digits_cfg(tmp_path / "limited", resume=True))
    resumed.train()
    assert preempted_by(resumed) is None and resumed.iter == 46
    expected, actual = weights(straight), weights(resumed)
    for key, value in expected.items():
        assert torch.equal(value, actual[key]), f"{key} differs after resuming"


def train_time(path: str) -> float:
    return torch.load(path, weights_only=True)["meta"]["train_time"]


def test_max_time_counts_the_runs_a_resume_continues_as_lightning_does(tmp_path):
    cfg = digits_cfg(tmp_path, **{"default_hooks.preemption": dict(max_time=2)})
    cfg.custom_hooks = [dict(type="WaitForMaxTimeAtIter", at=5)]
    Runner.from_cfg(cfg).train()
    first = train_time(os.path.join(cfg.work_dir, "iter_5.pth"))
    assert 2 <= first < 30  # the waiting iteration ran until max_time was up

    # the same limit again: the earlier run used it up, so the resumed one stops at once
    resumed = Runner.from_cfg(
        digits_cfg(tmp_path, resume=True, **{"default_hooks.preemption": dict(max_time=2)})
    )
    resumed.train()
    assert preempted_by(resumed) == "max_time" and resumed.iter == 6
    second = train_time(os.path.join(cfg.work_dir, "iter_6.pth"))
    assert first < second < first + 30  # the new run's time added to the old
    log = max(Path(cfg.work_dir).glob("*/*.log")).read_text()
    assert re.search(r"trained for 0:00:0\d of 0:00:02; stopping after the first iteration", log)

    # a longer limit: the rest of the training fits; its checkpoints go on counting
    longer = {"default_hooks.preemption": dict(max_time=3600)}
    finished = Runner.from_cfg(digits_cfg(tmp_path, resume=True, **longer))
    finished.train()
    assert preempted_by(finished) is None and finished.iter == 46
    assert train_time(os.path.join(cfg.work_dir, "epoch_2.pth")) > second

    # load_from starts a new run: its max_time counts from zero, not from the old run's time
    fresh = digits_cfg(tmp_path / "fresh", load_from=os.path.join(cfg.work_dir, "epoch_2.pth"))
    fresh.default_hooks.preemption = dict(max_time=3600)
    fresh.train_cfg.max_epochs = 1
    Runner.from_cfg(fresh).train()
    assert (
        "the runs this one resumes from"
        not in max((tmp_path / "fresh").glob("*/*.log")).read_text()
    )


def test_every_checkpoint_records_the_training_time_so_far(tmp_path):
    runner = Runner.from_cfg(digits_cfg(tmp_path))
    runner.train()
    one, two = (train_time(os.path.join(tmp_path, f"epoch_{n}.pth")) for n in (1, 2))
    assert 0 < one < two
    hook = next(hook for hook in runner.hooks if isinstance(hook, PreemptionHook))
    assert two <= hook.train_time()  # frozen at after_train: idle time is not training
    frozen = hook.train_time()
    time.sleep(0.05)
    assert hook.train_time() == frozen


@pytest.mark.parametrize(
    ("max_time", "seconds"),
    [
        (7.5, 7.5),
        ("00:01:30:00", 5400),
        ("01:30:00", 5400),
        ("02:30", 150),
        (dict(hours=1, minutes=2), 3720),
        (timedelta(seconds=5), 5),
        (None, None),
    ],
)
def test_max_time_takes_lightnings_forms(max_time, seconds):
    assert PreemptionHook(max_time=max_time).max_time == seconds


@pytest.mark.parametrize("max_time", [0, -3, "soon", "90", dict(weeks="x"), True, float("inf")])
def test_a_bad_max_time_is_refused_with_the_forms_it_takes(max_time):
    with pytest.raises(ValueError, match=r"PreemptionHook: max_time must be a duration above 0"):
        PreemptionHook(max_time=max_time)


def test_a_signal_in_the_iteration_the_checkpoint_hook_saves_writes_one_checkpoint(tmp_path):
    cfg = digits_cfg(tmp_path / "work")
    cfg.train_cfg = dict(by_epoch=False, max_iters=20, val_interval=100)
    cfg.param_scheduler = None
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=5)
    cfg.custom_hooks = [dict(type="SignalSelfAtIter", at=10)]
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 10
    assert sorted(p.name for p in Path(cfg.work_dir).glob("*.pth")) == ["iter_10.pth", "iter_5.pth"]
    assert find_latest_checkpoint(cfg.work_dir).endswith("iter_10.pth")


def test_turned_off_it_leaves_the_signals_alone(tmp_path):
    cfg = digits_cfg(tmp_path / "work", **{"default_hooks.preemption": None})
    cfg.train_cfg = dict(by_epoch=False, max_iters=3, val_interval=100)
    cfg.param_scheduler = None
    seen = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: seen.append(number))
    try:
        cfg.custom_hooks = [dict(type="SignalSelfAtIter", at=2)]
        runner = Runner.from_cfg(cfg)
        runner.train()
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert seen == [signal.SIGUSR1] and runner.iter == 3


def _ready_then_sleep(ready):
    ready.set()
    time.sleep(30)


@HOOKS.register_module()
class ForkAndFailAtIter(Hook):
    """During iteration 2: forks a child that is no data worker (a Pool worker, say), stops
    it with SIGTERM and notes how it ended; then fails the training."""

    exit_codes: list = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == 2:
            context = multiprocessing.get_context("fork")
            ready = context.Event()
            child = context.Process(target=_ready_then_sleep, args=(ready,))
            child.start()
            # a signal that reaches a child before Python finished forking it is dropped
            # (CPython clears the pending signals then): send it once the child runs
            ready.wait(10)
            child.terminate()
            child.join(10)
            ForkAndFailAtIter.exit_codes.append(child.exitcode)
            if child.exitcode is None:
                child.kill()
            raise RuntimeError("the training fails here")


def test_forked_children_end_on_sigterm_and_a_failed_training_gives_the_signals_back(tmp_path):
    before = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGUSR1)}
    cfg = digits_cfg(tmp_path / "work", custom_hooks=[dict(type="ForkAndFailAtIter")])
    ForkAndFailAtIter.exit_codes = []
    with pytest.raises(RuntimeError, match="the training fails here"):
        Runner.from_cfg(cfg).train()
    assert ForkAndFailAtIter.exit_codes == [-signal.SIGTERM]  # not ignored, as data workers do
    assert {number: signal.getsignal(number) for number in before} == before


def test_unknown_signal_names_are_refused():
    with pytest.raises(ValueError, match="signals has 'SIGNOPE'"):
        PreemptionHook(signals=("SIGTERM", "SIGNOPE"))
    assert PreemptionHook(signals="usr2").signals == [signal.SIGUSR2]


def test_train_py_exits_with_the_preempted_code_and_resumes_to_the_end(tmp_path, run_in_repo):
    work = tmp_path / "work"
    command = [
        sys.executable,
        "tools/train.py",
        "configs/digits_convnet.py",
        "--work-dir",
        str(work),
        "--cfg-options",
        "train_cfg.max_epochs=40",
        "default_hooks.logger.interval=1",
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    for line in process.stdout:  # wait until it trains, then stop it as a scheduler would
        lines.append(line)
        if "Epoch(train)" in line:
            process.send_signal(signal.SIGTERM)
            break
    started = time.monotonic()
    lines += process.stdout.readlines()
    assert process.wait(timeout=120) == PREEMPTED_EXIT_CODE, "".join(lines[-30:])
    assert time.monotonic() - started < 60
    output = "".join(lines)
    assert "SIGTERM received: saving a checkpoint" in output
    saved = find_latest_checkpoint(str(work))
    assert saved is not None and Path(saved).name.startswith("iter_")
    step = int(Path(saved).stem.split("_")[1])
    assert step < 40 * 23

    resumed = run_in_repo([*command[:-2], "train_cfg.max_epochs=1", "--resume"], env=env)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert f"resumed from {saved}" in resumed.stdout + resumed.stderr


def test_a_second_signal_ends_a_process_that_does_not_reach_a_boundary(run_in_repo):
    script = """
import os, signal, time
from types import SimpleNamespace
from runnerx.hooks import PreemptionHook
hook = PreemptionHook()
hook.before_train(SimpleNamespace(logger=None))
hook.received = signal.SIGUSR1  # as if another rank's signal (or max_time) had stopped it
os.kill(os.getpid(), signal.SIGTERM)  # this rank's own copy: the same stop
os.kill(os.getpid(), signal.SIGTERM)  # delivered twice (Slurm and torchrun): the same stop
time.sleep(0.1)
print('noted', hook.received, flush=True)
time.sleep(2.1)
os.kill(os.getpid(), signal.SIGTERM)  # asked again: the process ends
time.sleep(5)
print('still alive')
"""
    done = run_in_repo([sys.executable, "-c", script], timeout=60)
    assert done.stdout.split() == ["noted", str(int(signal.SIGUSR1))]
    assert done.returncode == -signal.SIGTERM


def test_the_checkpoint_of_a_stop_is_rotated_out_by_the_periodic_ones(tmp_path):
    def tiny(**kwargs):
        checkpoint = dict(type="CheckpointHook", interval=1, max_keep_ckpts=1)
        return Runner(
            model=TinyNet(),
            work_dir=str(tmp_path),
            train_dataloader=loader(shuffle=True),
            train_cfg=dict(by_epoch=True, max_epochs=3),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
            default_hooks=dict(checkpoint=checkpoint),
            **kwargs,
        )

    stopped = tiny(custom_hooks=[SignalSelfAtIter(6, "SIGTERM")])  # in epoch 2 (4 iterations)
    stopped.train()
    stop_file = os.path.join(tmp_path, "iter_6.pth")
    assert find_latest_checkpoint(str(tmp_path)) == stop_file
    assert stopped.message_hub.get_info("last_ckpt") == stop_file  # LoggerHook's finite one
    assert sorted(p.name for p in tmp_path.glob("*.pth")) == ["epoch_1.pth", "iter_6.pth"]
    resumed = tiny(resume=True)
    resumed.train()
    assert sorted(p.name for p in tmp_path.glob("*.pth")) == ["epoch_3.pth"]
    assert f"Removed the checkpoint {stop_file} (max_keep_ckpts)" in (
        next(tmp_path.glob(f"{resumed.timestamp}/*.log")).read_text()
    )


_WORKER_MARK: dict = {}


def _mark_worker(worker_id: int, tag: str) -> None:
    _WORKER_MARK["tag"] = f"{tag}{worker_id}"


class _WorkerState(Dataset):
    """Every sample: the reading process's pid and the mark its worker_init_fn left."""

    def __len__(self) -> int:
        return 1000

    def __getitem__(self, index: int) -> tuple:
        return os.getpid(), _WORKER_MARK.get("tag")


def test_workers_leave_stop_signals_to_the_main_process_but_end_on_its_terminate():
    init = LeaveSignalsToMain(functools.partial(_mark_worker, tag="user"), [15, 10])
    init = pickle.loads(pickle.dumps(init))  # as spawn / forkserver workers get it
    loader = DataLoader(
        _WorkerState(), batch_size=None, num_workers=1, worker_init_fn=init,
        multiprocessing_context="fork",
    )  # fmt: skip
    batches = iter(loader)
    pid, mark = next(batches)
    assert mark == "user0"  # the wrapped worker_init_fn ran in the worker
    for number in ("TERM", "USR1"):  # as a scheduler sends them: from another process
        subprocess.run(["kill", f"-{number}", str(pid)], check=True)
    time.sleep(0.2)
    assert [next(batches)[0] for _ in range(3)] == [pid] * 3  # still serving
    (worker,) = batches._workers
    worker.terminate()  # the DataLoader's (and multiprocessing's) last resort at shutdown
    worker.join(5)
    assert worker.exitcode == 0


WORKER_NOTE = """
import os
from runnerx.registry import FUNCTIONS

@FUNCTIONS.register_module()
def note_worker(worker_id, folder):
    open(os.path.join(folder, f'worker{worker_id}_{os.getpid()}'), 'w').close()
"""


def test_a_signal_to_the_whole_job_saves_the_stop_checkpoint_while_workers_serve(tmp_path):
    # Slurm's scancel and time limit signal every process of the job, DataLoader workers
    # included: the training workers (with the config's own worker_init_fn) and the
    # persistent validation workers (started by the sanity check) must leave it to the
    # main process, which saves and exits with 75
    (tmp_path / "worker_note.py").write_text(WORKER_NOTE)
    notes = tmp_path / "notes"
    notes.mkdir()
    config = tmp_path / "job_cfg.py"
    config.write_text(
        f"_base_ = [{str(ROOT / 'configs/digits_convnet.py')!r}]\n"
        "custom_imports = dict(imports=['worker_note'])\n"
        f"train_dataloader = dict(num_workers=2, worker_init_fn=dict(type='note_worker', "
        f"folder={str(notes)!r}))\n"
        "val_dataloader = dict(num_workers=2, persistent_workers=True)\n"
        "num_sanity_val_steps = 1\n"
        "default_hooks = dict(logger=dict(interval=1))\n"
    )
    work = tmp_path / "work"
    command = [sys.executable, "tools/train.py", str(config), "--work-dir", str(work)]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(tmp_path))
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    training = threading.Event()
    reader = threading.Thread(target=_read_lines, args=(process, lines, training), daemon=True)
    reader.start()
    try:
        assert training.wait(120), "".join(lines[-30:])
        os.killpg(process.pid, signal.SIGTERM)
        code = process.wait(timeout=120)  # before the fix: an error, or a hang
        reader.join(10)
        output = "".join(lines)
        assert code == PREEMPTED_EXIT_CODE, output[-3000:]
        assert "killed by signal" not in output and "Traceback" not in output, output[-3000:]
        saved = re.search(r"SIGTERM received: saving a checkpoint at (\d+) iterations", output)
        assert saved, output[-3000:]
        assert find_latest_checkpoint(str(work)) == str(work / f"iter_{saved[1]}.pth")
        assert len(list(notes.iterdir())) >= 2  # the config's worker_init_fn ran in them
        deadline = time.monotonic() + 10
        while _processes_in_group(process.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_in_group(process.pid) == []  # no worker outlives the run
    finally:
        if _processes_in_group(process.pid):
            os.killpg(process.pid, signal.SIGKILL)


def _read_lines(process: subprocess.Popen, lines: list, training: threading.Event) -> None:
    """Collect ``process``'s output; set ``training`` once it is mid-epoch, its workers
    serving (the second iteration's log line)."""
    for line in process.stdout:
        lines.append(line)
        if re.search(r"Epoch\(train\) \[1\]\[ *2/", line):
            training.set()


def _processes_in_group(group: int) -> list[str]:
    listed = subprocess.run(["ps", "-o", "pid=", "-g", str(group)], capture_output=True, text=True)
    return listed.stdout.split()
