"""Where the training loops validate and where a resume continues: ``validation_follows``
(which PreemptionHook asks before it settles a stop signal) names exactly the iterations
after which a validation runs, fresh and resumed; a checkpoint of the other kind of loop
(iteration- or epoch-based) is resumed as the log says."""

import re
import uuid
from pathlib import Path

import pytest

from runnerx.checkpoint.runner_state import find_latest_checkpoint
from runnerx.hooks import Hook
from runnerx.runner import Runner
from tests.checkpoint.conftest import ScriptedMetric, TinyNet
from tests.checkpoint.tiny_data import loader
from tests.hooks.test_hooks_preemption import SignalSelfAtIter

ITERS_PER_EPOCH = 4  # tiny_data: 8 samples in batches of 2


class RecordValidationPoints(Hook):
    """Notes the iterations whose ``validation_follows()`` said yes, and the iterations
    after which a validation began."""

    priority = "LOWEST"  # where PreemptionHook asks

    def __init__(self):
        self.said = []
        self.validated = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.train_loop.validation_follows():
            self.said.append(runner.iter + 1)

    def before_val_epoch(self, runner):
        self.validated.append(runner.iter)


def tiny_runner(work_dir: Path, train_cfg: dict, hooks=(), checkpoint=None, **kwargs) -> Runner:
    """A Runner of TinyNet, validating as ``train_cfg`` says; a ``checkpoint`` dict (its
    CheckpointHook's arguments) saves checkpoints, else only PreemptionHook does."""
    return Runner(
        model=TinyNet(),
        work_dir=str(work_dir),
        train_dataloader=loader(shuffle=True),
        train_cfg=train_cfg,
        val_dataloader=loader(shuffle=False),
        val_cfg={},
        val_evaluator=ScriptedMetric([0.5] * 50),
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.1}},
        default_hooks={
            "logger": {"type": "LoggerHook", "interval": 100},
            "checkpoint": checkpoint and {"type": "CheckpointHook", **checkpoint},
        },
        custom_hooks=list(hooks),
        experiment_name=f"loop_points_{uuid.uuid4().hex}",
        randomness={"seed": 0},
        **kwargs,
    )


TRAIN_CFGS = {
    "every_2_epochs": dict(by_epoch=True, max_epochs=3, val_interval=2),
    "mid_epoch": dict(by_epoch=True, max_epochs=3, val_interval=2, val_check_interval=0.5),
    "dynamic": dict(by_epoch=True, max_epochs=4, val_interval=3, dynamic_intervals=[(2, 1)]),
    "iterations": dict(by_epoch=False, max_iters=10, val_interval=3),
}


@pytest.mark.parametrize("name", list(TRAIN_CFGS))
def test_validation_follows_names_the_iterations_validated_after(tmp_path, name):
    points = RecordValidationPoints()
    tiny_runner(tmp_path, TRAIN_CFGS[name], [points]).train()
    assert points.validated  # the schedule validates somewhere
    assert points.said == points.validated


@pytest.mark.parametrize("name", ["mid_epoch", "iterations"])
def test_validation_follows_counts_from_where_a_resumed_run_continues(tmp_path, name):
    stopped = tiny_runner(tmp_path, TRAIN_CFGS[name], [SignalSelfAtIter(5)])
    stopped.train()
    assert find_latest_checkpoint(str(tmp_path)).endswith("iter_5.pth")  # mid-epoch
    points = RecordValidationPoints()
    tiny_runner(tmp_path, TRAIN_CFGS[name], [points], resume=True).train()
    assert points.validated and points.said == points.validated


def log_of(runner: Runner) -> str:
    return next(Path(runner.work_dir).glob(f"{runner.timestamp}/*.log")).read_text()


def test_an_iteration_checkpoint_resumed_by_epochs_says_its_position_is_dropped(tmp_path):
    # 6 iterations: the data stands 2 batches into the second pass
    by_iters = dict(by_epoch=False, max_iters=10, val_interval=100)
    tiny_runner(tmp_path, by_iters, [SignalSelfAtIter(6)]).train()
    resumed = tiny_runner(tmp_path, dict(by_epoch=True, max_epochs=2), resume=True)
    resumed.train()
    warning = re.sub(r"\s+", " ", log_of(resumed))
    assert (
        "resume: the checkpoint's training data stood 2 batches into pass 2, which is not in "
        "epoch 1 of this epoch-based loop (an iteration-based loop counts passes, not epochs): "
        "epoch 1 starts at its first batch and the iterations count on from 6, so the run ends "
        "after 6 + 2 x 4 = 14 iterations"
    ) in warning
    assert resumed.iter == 6 + 2 * ITERS_PER_EPOCH  # as it said


def test_an_epoch_checkpoint_resumed_by_iterations_says_where_it_continues(tmp_path):
    every_epoch = dict(interval=1)
    tiny_runner(tmp_path, dict(by_epoch=True, max_epochs=1), checkpoint=every_epoch).train()
    by_iters = dict(by_epoch=False, max_iters=7, val_interval=100)
    resumed = tiny_runner(tmp_path, by_iters, resume=True)
    resumed.train()
    assert (
        "resume: the checkpoint is at epoch 1, as an epoch-based loop counts; this "
        "iteration-based loop counts on from iteration 4 to max_iters=7, the training data "
        "continuing after batch 4 of pass 1"
    ) in log_of(resumed)
    assert resumed.iter == 7
    # an epoch-based run's own epoch-end checkpoint says nothing of the kind
    epochs = tmp_path / "epochs"
    tiny_runner(epochs, dict(by_epoch=True, max_epochs=1), checkpoint=every_epoch).train()
    more = tiny_runner(epochs, dict(by_epoch=True, max_epochs=2), resume=True)
    more.train()
    assert more.iter == 2 * ITERS_PER_EPOCH
    assert "resume: the checkpoint" not in log_of(more)
