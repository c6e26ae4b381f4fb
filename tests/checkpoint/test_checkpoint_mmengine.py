"""Checkpoints written by MMEngine (its own Runner, in another process) load safely without
MMEngine, give their weights to ``load_from`` and continue a run with ``resume``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from runnerx.checkpoint import (
    convert_mmengine_message_hub,
    is_mmengine_checkpoint,
    load_checkpoint,
)
from runnerx.hooks import Hook
from runnerx.logging import MessageHub

pytest.importorskip("mmengine")

HERE = Path(__file__).parent
ADAMW = {"optimizer": {"type": "AdamW", "lr": 0.01}}
WARM_UP = [{"type": "LinearLR", "start_factor": 0.5, "by_epoch": False, "end": 2}]


@pytest.fixture(scope="module")
def mmengine_run(tmp_path_factory, run_in_repo) -> Path:
    """The work dir of a one-epoch MMEngine run (4 iterations)."""
    work_dir = tmp_path_factory.mktemp("mmengine") / "work"
    result = run_in_repo(
        [sys.executable, str(HERE / "mmengine_writer.py"), str(work_dir)], timeout=120
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return work_dir


@pytest.fixture
def without_mmengine(monkeypatch):
    """Make every ``import mmengine...`` fail, as if it were not installed."""
    for name in [name for name in sys.modules if name.split(".")[0] == "mmengine"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mmengine", None)


class StartRecorder(Hook):
    """Records the counters and weights training starts from (after resume / load_from)."""

    def before_train(self, runner) -> None:
        self.epoch, self.iter = runner.epoch, runner.iter
        self.weight = runner.unwrapped_model.linear.weight.detach().clone()


def test_mmengine_checkpoints_load_safely_without_mmengine(mmengine_run, without_mmengine):
    for name in ("epoch_1.pth", "best_acc_epoch_1.pth"):
        checkpoint = load_checkpoint(mmengine_run / name)
        assert is_mmengine_checkpoint(checkpoint)
        assert set(checkpoint["state_dict"]) == {"linear.weight", "linear.bias"}
        buffer = checkpoint["message_hub"]["log_scalars"]["train/loss"]
        values, counts = buffer.data
        assert len(values) == 4 and list(counts) == [1, 1, 1, 1]
    epoch = load_checkpoint(mmengine_run / "epoch_1.pth")
    assert (epoch["meta"]["epoch"], epoch["meta"]["iter"]) == (1, 4)
    assert epoch["optimizer"]["state"][0]["step"] == 4
    assert epoch["param_schedulers"][0]["_global_step"] == 4


def test_an_mmengine_message_hub_converts_to_runnerx_history(mmengine_run, without_mmengine):
    expected = json.loads((mmengine_run / "expected.json").read_text())["history"]
    state = load_checkpoint(mmengine_run / "epoch_1.pth")["message_hub"]
    converted = convert_mmengine_message_hub(state)
    assert convert_mmengine_message_hub(converted) == converted  # runnerx's layout passes through
    hub = MessageHub("converted")
    hub.load_state_dict(converted)
    for key, history in expected.items():
        buffer = hub.get_scalar(key)
        assert buffer.count == len(history["values"])
        assert buffer.current() == pytest.approx(history["values"][-1])
        assert buffer.mean() == pytest.approx(sum(history["values"]) / sum(history["counts"]))
    info = converted["runtime_info"]
    assert type(info["eta"]) is float  # a numpy scalar in MMEngine's hub
    assert info["best_score"] == 0.5 and info["best_ckpt"].endswith("best_acc_epoch_1.pth")


def test_resume_continues_an_mmengine_run(mmengine_run, make_runner):
    path = str(mmengine_run / "epoch_1.pth")
    start = StartRecorder()
    runner = make_runner(
        {"interval": 1},
        max_epochs=2,
        optim_wrapper=ADAMW,
        param_scheduler=WARM_UP,
        resume=path,
        custom_hooks=[start],
    )
    runner.train()
    saved = load_checkpoint(path)
    assert (start.epoch, start.iter) == (1, 4)
    assert torch.equal(start.weight, saved["state_dict"]["linear.weight"])
    assert (runner.epoch, runner.iter) == (2, 8)
    assert runner.optim_wrapper.optimizer.state_dict()["state"][0]["step"] == 8
    assert runner.param_schedulers[0].state_dict()["_global_step"] == 8
    assert runner.message_hub.get_scalar("train/loss").count == 4 + 4
    assert runner.message_hub.get_info("best_score") == 0.5
    # what runnerx saves after resuming is runnerx's layout, safe to load as well
    resumed = load_checkpoint(Path(runner.work_dir) / "epoch_2.pth")
    assert isinstance(resumed["message_hub"]["log_scalars"]["train/loss"], dict)


def test_load_from_takes_only_the_weights_of_an_mmengine_checkpoint(mmengine_run, make_runner):
    path = str(mmengine_run / "best_acc_epoch_1.pth")
    start = StartRecorder()
    runner = make_runner({"interval": 1}, max_epochs=1, load_from=path, custom_hooks=[start])
    runner.train()
    assert (start.epoch, start.iter) == (0, 0)
    assert torch.equal(start.weight, load_checkpoint(path)["state_dict"]["linear.weight"])
