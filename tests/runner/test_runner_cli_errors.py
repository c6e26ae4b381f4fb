"""tools/train.py and tools/test.py say what went wrong and what to do: a training that fails
or is interrupted (Ctrl-C) says so in the work dir's .log, with where it stopped and the
checkpoint to resume from, and the console shows the traceback once; ``--resume last``
resumes the work dir's last checkpoint; swapped CONFIG CHECKPOINT are named as such."""

import json
import os
import shutil
import signal
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from tests.tools import load_tool

ROOT = Path(__file__).parents[2]

HOOK_MODULE = '''
import os, signal
from runnerx import HOOKS
from runnerx.hooks import Hook


@HOOKS.register_module()
class StopAtIter(Hook):
    """During iteration ``at``: raise an error, or send this process SIGINT (Ctrl-C)."""

    def __init__(self, at, how):
        self.at, self.how = at, how

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            if self.how == "sigint":
                os.kill(os.getpid(), signal.SIGINT)
            raise RuntimeError("fails on purpose")
'''

ITERATION_BASED = f"""
_base_ = {str(ROOT / "configs/digits_convnet.py")!r}
train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=100, val_interval=1000)
param_scheduler = None
default_hooks = dict(checkpoint=dict(by_epoch=False, interval=5), logger=dict(interval=5))
"""


def the_log(work: Path) -> str:
    (log,) = work.glob("*/*.log")
    return log.read_text()


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory, run_in_repo):
    """A function ``(how, at=7)``: tools/train.py on the digits example stopped during
    iteration ``at`` (checkpoints every 5) by an error or by Ctrl-C; gives its work dir and
    finished process."""
    folder = tmp_path_factory.mktemp("stopped")
    (folder / "stop_hook.py").write_text(textwrap.dedent(HOOK_MODULE))
    (folder / "iters.py").write_text(ITERATION_BASED)
    env = dict(os.environ, PYTHONPATH=f"{folder}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    runs = {}

    def run(how: str, at: int = 7):
        name = f"{how}_{at}"
        if name not in runs:
            (folder / f"{name}.py").write_text(
                "_base_ = './iters.py'\ncustom_imports = dict(imports=['stop_hook'])\n"
                f"custom_hooks = [dict(type='StopAtIter', at={at}, how={how!r})]\n"
            )
            work = folder / f"work_{name}"
            args = [sys.executable, "tools/train.py", str(folder / f"{name}.py")]
            runs[name] = work, run_in_repo([*args, "--work-dir", str(work)], env=env)
        return runs[name]

    return run


def test_an_error_is_in_the_log_with_where_it_stopped_and_on_the_console_once(stopped_run):
    work, job = stopped_run("raise")
    assert job.returncode == 1, job.stderr[-3000:]
    log = the_log(work)
    expected = (
        f"- ERROR - {ROOT / 'runnerx/runner/cli.py'} - report_failure - ",
        "train failed during the after_train_iter hooks of iteration 7 (its training step "
        f"done); the last checkpoint is {work / 'iter_5.pth'} "
        "(--resume continues from it):\nTraceback (most recent call last):\n",
    )
    assert all(part in log for part in expected), log[-3000:]
    assert log.endswith("RuntimeError: fails on purpose\n")
    console = job.stdout + job.stderr
    assert console.count("Traceback (most recent call last)") == 1, console[-3000:]
    assert console.count("RuntimeError: fails on purpose") == 1
    assert "is per process" not in log  # one process: its batch is the whole batch


def test_an_error_in_the_first_iteration_points_to_no_checkpoint(stopped_run):
    work, job = stopped_run("raise", at=1)
    assert job.returncode == 1, job.stderr[-3000:]
    log = the_log(work)
    assert "train failed before completing an iteration:\nTraceback" in log, log[-3000:]
    assert "checkpoint" not in log.split("train failed")[1]


def test_an_error_while_building_the_runner_is_in_its_log_once(tmp_path, run_in_repo):
    config = tmp_path / "bad_model.py"
    config.write_text(
        f"_base_ = {str(ROOT / 'configs/digits_convnet.py')!r}\n"
        "model = dict(channels=(16, -3))\n"  # a negative width: Conv2d refuses it
    )
    work = tmp_path / "work"
    job = run_in_repo([sys.executable, "tools/train.py", str(config), "--work-dir", str(work)])
    assert job.returncode == 1, job.stderr[-3000:]
    log = the_log(work)
    assert "- ERROR - " in log and " - building the Runner failed:\nTraceback" in log, log[-3000:]
    last_line = log.rstrip().splitlines()[-1]
    console, header = job.stdout + job.stderr, "Traceback (most recent call last)"
    assert console.count(header) == log.count(header), console[-3000:]  # shown once
    assert console.count(last_line) == 1 and "while building cfg.model" in last_line


def test_ctrl_c_is_one_line_in_the_log_and_on_the_console(stopped_run):
    work, job = stopped_run("sigint")
    assert job.returncode == 128 + signal.SIGINT, job.stderr[-3000:]
    line = (
        "- WARNING - train interrupted (Ctrl-C) during the after_train_iter hooks of iteration "
        f"7 (its training step done); the last checkpoint is {work / 'iter_5.pth'} (--resume "
        "continues from it)\n"
    )
    assert the_log(work).endswith(line)
    assert job.stdout.endswith(line) and "Traceback" not in job.stdout + job.stderr


def test_resume_last_continues_from_the_work_dirs_last_checkpoint(stopped_run, tmp_path):
    work, _ = stopped_run("raise")
    train = load_tool("train")
    config = str(work.parent / "iters.py")  # the error fixed, training goes on
    options = ["--work-dir", str(work), "--cfg-options", "train_cfg.max_iters=8"]
    train.main([config, "--resume", "last", *options])
    newest = max(work.glob("*/*.log"), key=lambda path: path.parent.name)
    resumed = f"resumed from {work / 'iter_5.pth'}: 5 iterations done, continues at iteration 6"
    assert f"{resumed} of 8\n" in newest.read_text()
    assert (work / "last_checkpoint").read_text().strip() == str(work / "iter_8.pth")

    with pytest.raises(SystemExit) as error:
        train.main([config, "--resume", "last", "--work-dir", str(tmp_path / "new")])
    assert str(error.value) == (
        f"tools/train.py --resume 'last': {tmp_path / 'new'} has no last_checkpoint file (no run "
        "saved a checkpoint there); give a checkpoint path, or --work-dir of the training run "
        "(--resume with no value starts afresh when there is no checkpoint yet)"
    )


@pytest.mark.parametrize("checkpoint", ["work/epoch_2.pth", "last"])
def test_test_py_names_swapped_arguments(capsys, checkpoint):
    with pytest.raises(SystemExit) as error:
        load_tool("test").parse_args([checkpoint, "configs/digits_convnet.py"])
    assert error.value.code == 2
    assert capsys.readouterr().err.endswith(
        "error: the arguments are CONFIG CHECKPOINT; they look swapped: try tools/test.py "
        f"configs/digits_convnet.py {checkpoint}\n"
    )


@pytest.fixture(scope="module")
def best_run(tmp_path_factory):
    """A function ``(keep, periodic=True)``: the work dir of the digits example trained one
    epoch by tools/train.py, validating mid-epoch and at its end, CheckpointHook keeping the
    ``keep`` best checkpoints; ``periodic=False``: no epoch checkpoint either (a work dir as a
    run stopped before its first periodic checkpoint leaves it: best checkpoints only)."""
    folder = tmp_path_factory.mktemp("best")
    (folder / "one_epoch.py").write_text(
        f"_base_ = {str(ROOT / 'configs/digits_convnet.py')!r}\n"
        "train_cfg = dict(max_epochs=1, val_check_interval=0.5)\nparam_scheduler = None\n"
        "default_hooks = dict(checkpoint=dict(save_best='accuracy/top1'))\n"
    )
    runs = set()

    def run(keep: int, periodic: bool = True) -> Path:
        work = folder / f"work_{keep}_{periodic}"
        if work not in runs:
            options = [f"default_hooks.checkpoint.max_keep_best={keep}"]
            if not periodic:
                options += [
                    "default_hooks.checkpoint.interval=2",
                    "default_hooks.checkpoint.save_last=False",
                ]
            args = [str(folder / "one_epoch.py"), "--work-dir", str(work), "--cfg-options"]
            load_tool("train").main([*args, *options])
            runs.add(work)
        return work

    return run


def validation_scores(work: Path) -> list[float]:
    """The validation scores the (one) training run in ``work`` logged."""
    (log_dir,) = [path for path in work.iterdir() if path.is_dir()]
    lines = (log_dir / "vis_data" / "scalars.json").read_text().splitlines()
    return [row["accuracy/top1"] for row in map(json.loads, lines) if "accuracy/top1" in row]


@pytest.mark.parametrize("keep", [1, 2])
def test_best_with_a_relative_work_dir_finds_each_best_checkpoint_once(best_run, keep, monkeypatch):
    from runnerx.runner.cli import checkpoint_to_test

    work = best_run(keep)
    assert Path((work / "last_checkpoint").read_text()).is_absolute()  # as MMEngine writes it
    kept = sorted(path.name for path in work.glob("best_*.pth"))
    assert len(kept) == keep
    monkeypatch.chdir(work.parent)
    chosen = checkpoint_to_test("best", work.name)  # --work-dir relative to the current dir
    assert Path(chosen).parent == Path(work.name) and Path(chosen).name in kept
    best_score, config = max(validation_scores(work)), str(work.parent / "one_epoch.py")
    metrics = load_tool("test").main([config, "best", "--work-dir", work.name])
    assert metrics["accuracy/top1"] == pytest.approx(best_score)


def test_last_without_a_periodic_checkpoint_names_the_newest_best_one(best_run, tmp_path):
    work = best_run(2, periodic=False)
    assert not (work / "last_checkpoint").exists()
    kept = sorted(work.glob("best_*.pth"), key=lambda path: path.stat().st_mtime)
    assert len(kept) == 2
    newest, config = kept[-1], str(work.parent / "one_epoch.py")
    with pytest.raises(SystemExit) as error:
        load_tool("test").main([config, "last", "--work-dir", str(work)])
    assert str(error.value) == (
        f"tools/test.py: 'last': {work} has no last_checkpoint file (its run saved only best "
        f"checkpoints, save_best); the newest is {newest}: test it with tools/test.py CONFIG "
        f"{newest}, or give 'best' for the best-scoring one"
    )
    train = load_tool("train")
    with pytest.raises(SystemExit) as error:
        train.main([config, "--resume", "last", "--work-dir", str(work)])
    assert str(error.value) == (
        f"tools/train.py --resume 'last': {work} has no last_checkpoint file (its run saved "
        f"only best checkpoints, save_best); the newest is {newest}: resume from it with "
        f"--resume {newest} (resume='{newest}'): training goes on from its iteration and data "
        "position, but the optimizer and parameter schedulers start over (save_best saves "
        "without their state)"
    )
    # the advice works (a second epoch to train), and the resume says what it lacks
    resumed = tmp_path / "resumed"
    options = ["--work-dir", str(resumed), "--cfg-options", "train_cfg.max_epochs=2"]
    train.main([config, "--resume", str(newest), *options])
    log = the_log(resumed)
    meta = torch.load(newest, weights_only=True)["meta"]
    done = f"1 epoch ({meta['iter']} iterations) done"
    assert f"resumed from {newest}: {done}, epoch 2 starts\n" in log
    assert f"resume: {newest} has no optimizer state" in log
    assert (resumed / "epoch_2.pth").exists()

    # a plain --resume starts afresh, as MMEngine's does, but says what the work dir holds
    again = tmp_path / "again"
    shutil.copytree(work, again)
    newest = again / newest.name  # copytree keeps modification times: still the newest
    train.main([config, "--resume", "--work-dir", str(again)])
    log = max(again.glob("*/*.log"), key=lambda path: path.parent.name).read_text()
    assert (
        f"WARNING - resume=True but {again} has no last_checkpoint file (its run saved only "
        f"best checkpoints, save_best): training starts from the beginning; the newest best "
        f"checkpoint is {newest}: resume from it with --resume {newest}"
    ) in log
    assert "resumed from" not in log and "Epoch(train) [1][" in log


def test_a_failure_with_only_best_checkpoints_names_the_newest(best_run):
    from runnerx.runner.cli import _progress

    work = best_run(2, periodic=False)
    newest = max(work.glob("best_*.pth"), key=lambda path: path.stat().st_mtime)
    hub = SimpleNamespace(get_info=lambda key: None)  # not validating
    runner = SimpleNamespace(_first_iter=0, iter=30, epoch=0, work_dir=str(work), message_hub=hub)
    assert _progress(runner, "train") == (
        f" after iteration 30; {work} has only best checkpoints, the newest {newest}: resume "
        f"from it with --resume {newest} (resume='{newest}'): training goes on from its "
        "iteration and data position, but the optimizer and parameter schedulers start over "
        "(save_best saves without their state)"
    )
    runner.work_dir = str(work.parent)  # no checkpoint at all
    assert _progress(runner, "train").endswith(f"; {work.parent} has no checkpoint to resume from")
