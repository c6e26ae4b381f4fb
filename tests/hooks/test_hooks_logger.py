"""LoggerHook: which iterations log, what reaches the visualizer at which step, log files."""

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from runnerx.evaluator import BaseMetric
from runnerx.fileio import wait_for_pending_writes
from runnerx.hooks import Hook, LoggerHook
from tests.hooks.test_hooks_with_runner import Line, Points, make_runner


class LogProcessorStub:
    def __init__(self, by_epoch=True):
        self.by_epoch = by_epoch
        self.calls = []

    def get_log_after_iter(self, runner, batch_idx, mode):
        self.calls.append((mode, batch_idx, runner.iter))
        return {f"{mode}/loss": 0.5}, f"{mode} iter {batch_idx}"

    def get_log_after_epoch(self, runner, batch_idx, mode, with_non_scalar=False):
        self.calls.append((mode, "epoch", batch_idx, with_non_scalar))
        tag = {f"{mode}/acc": 0.75}
        if with_non_scalar:
            tag[f"{mode}/confusion"] = torch.tensor([[1, 0], [0, 1]])
        return tag, f"{mode} epoch done"


class VisualizerStub:
    def __init__(self):
        self.scalars = []
        self.closed = False

    def add_scalars(self, scalar_dict, step, file_path=None):
        # MMEngine's JSON log, beside scalars.json (once before_run has named it)
        assert file_path in (None, "20240101_000000.json")
        self.scalars.append((scalar_dict, step))

    def close(self):
        self.closed = True


@pytest.fixture
def logged(runner):
    runner.log_processor = LogProcessorStub()
    runner.visualizer = VisualizerStub()
    runner.train_dataloader = list(range(5))
    return runner


def train_iters(runner):
    return [call[1] for call in runner.log_processor.calls if call[0] == "train"]


def test_every_interval_iterations_are_logged_and_the_last_of_an_epoch_is_ignored(logged, train):
    train(logged, [LoggerHook(interval=2)], epochs=2)
    assert train_iters(logged) == [1, 3, 1, 3]
    assert [step for _, step in logged.visualizer.scalars] == [2, 4, 7, 9]
    assert "train iter 1" in logged.logger.messages("info")


def test_the_last_iteration_of_an_epoch_is_logged_unless_ignore_last(logged, train):
    train(logged, [LoggerHook(interval=2, ignore_last=False)], epochs=1)
    assert train_iters(logged) == [1, 3, 4]
    assert [step for _, step in logged.visualizer.scalars] == [2, 4, 5]


def test_an_epoch_shorter_than_the_interval_still_logs_its_end(logged, train):
    logged.train_dataloader = [0, 1, 2]
    train(logged, [LoggerHook(interval=10)], epochs=2)
    assert train_iters(logged) == [2, 2]


def test_the_experiment_name_is_logged_periodically_and_at_epoch_ends(logged, train):
    train(logged, [LoggerHook(interval=100, interval_exp_name=3)], epochs=2)
    # iterations 3, 5 (end of epoch 1), 6, 9, 10 (end of epoch 2)
    names = [m for m in logged.logger.messages() if m == "Exp name: exp_20240101_000000"]
    assert len(names) == 5


@pytest.mark.parametrize("mode", ["val", "test"])
def test_val_and_test_iterations_log_every_interval_without_the_visualizer(logged, mode):
    hook = LoggerHook(interval=2)
    for batch_idx in range(5):
        getattr(hook, f"after_{mode}_iter")(logged, batch_idx)
    assert logged.log_processor.calls == [(mode, 1, 0), (mode, 3, 0)]
    assert logged.visualizer.scalars == []


@pytest.mark.parametrize(
    ("hook_kwargs", "processor_by_epoch", "step"),
    [({}, True, 3), ({"log_metric_by_epoch": False}, True, 120), ({}, False, 120)],
)
def test_validation_results_are_logged_at_the_epoch_or_the_iteration(
    logged, hook_kwargs, processor_by_epoch, step
):
    logged.log_processor.by_epoch = processor_by_epoch
    logged.epoch, logged.iter = 3, 120
    LoggerHook(**hook_kwargs).after_val_epoch(logged, {"acc": 0.75})
    assert logged.log_processor.calls == [("val", "epoch", 2, False)]  # len(val_dataloader)
    assert logged.visualizer.scalars == [({"val/acc": 0.75}, step)]
    assert "val epoch done" in logged.logger.messages("info")


def test_an_iteration_based_loop_logs_validations_at_the_iteration(logged):
    logged.epoch, logged.iter = 0, 120  # an iteration-based loop stays in epoch 0
    logged._train_loop = SimpleNamespace(unit="iteration")
    LoggerHook().after_val_epoch(logged, {"acc": 0.75})  # log_processor.by_epoch=True
    assert logged.visualizer.scalars == [({"val/acc": 0.75}, 120)]


class OutputMean(BaseMetric):
    default_prefix = "line"

    def process(self, data_batch, data_samples):  # a list of 0-dim tensors, as MMEngine gives
        self.results.extend(torch.stack(data_samples).tolist())

    def compute_metrics(self, results):
        return dict(out=sum(results) / len(results), n=len(results))


class CountsAndFlags(Hook):
    """Puts an int and a bool training scalar in the hub every iteration, as a user's hook may."""

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        runner.message_hub.update_scalar("train/icount", runner.iter + 1)
        runner.message_hub.update_scalar("train/flag", True)


def test_an_iteration_based_run_with_the_default_log_processor_logs_by_iteration(tmp_path):
    runner = make_runner(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=6, val_interval=3),
        val_dataloader=dict(
            dataset=Points(), sampler=dict(type="DefaultSampler", shuffle=False), batch_size=4
        ),
        val_cfg=dict(),
        val_evaluator=OutputMean(),
        default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=2)),
        custom_hooks=[CountsAndFlags()],
    )  # log_processor.by_epoch=True, MMEngine's default
    runner.train()
    lines = Path(runner.log_dir, f"{runner.timestamp}.log").read_text().splitlines()
    train = [line.split(" - INFO - ")[1] for line in lines if "(train)" in line]
    assert [line[: line.index("]") + 1] for line in train] == [
        "Iter(train) [2/6]",
        "Iter(train) [4/6]",
        "Iter(train) [6/6]",
    ]  # MMEngine: 'Epoch(train) [1][6/4]'
    assert [line.split("  ")[-2:] for line in train] == [
        [f"icount: {count}", "flag: True"] for count in (2, 4, 6)
    ]  # MMEngine's form; not 2.0000, 1.0000
    assert sum("Iter(val) [2/2]    line/out: " in line for line in lines) == 2
    scalars = Path(runner.log_dir, "vis_data/scalars.json").read_text()
    records = [json.loads(line) for line in scalars.splitlines()]
    assert [record["step"] for record in records if "line/out" in record] == [
        3,
        6,
    ]  # MMEngine: 0, 0
    trained = [record for record in records if "loss" in record]
    assert [(record["icount"], record["flag"]) for record in trained] == [
        (2, True),
        (4, True),
        (6, True),
    ]
    assert all(type(record["icount"]) is int for record in trained)


def test_test_results_are_written_as_json_in_the_log_dir(logged):
    hook = LoggerHook()
    hook.before_run(logged)
    hook.after_test_epoch(logged, {"acc": 0.75})
    with open(os.path.join(logged.log_dir, "20240101_000000.json")) as file:
        assert json.load(file) == {"test/acc": 0.75, "test/confusion": [[1, 0], [0, 1]]}
    assert logged.log_processor.calls == [("test", "epoch", 2, True)]


def test_after_run_closes_the_visualizer_and_copies_logs_to_out_dir(logged, tmp_path):
    log_dir = logged.log_dir
    for name in ("run.log", "vis_data/scalars.json", "config.py", "weights.pth"):
        os.makedirs(os.path.dirname(os.path.join(log_dir, name)), exist_ok=True)
        with open(os.path.join(log_dir, name), "w") as file:
            file.write(name)
    hook = LoggerHook(out_dir=str(tmp_path / "archive"), keep_local=False)
    hook.before_run(logged)
    hook.after_run(logged)
    assert logged.visualizer.closed
    target = tmp_path / "archive" / "exp"
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert copied == ["config.py", "run.log", "vis_data/scalars.json"]
    assert (target / "vis_data" / "scalars.json").read_text() == "vis_data/scalars.json"
    assert sorted(os.listdir(log_dir)) == ["vis_data", "weights.pth"]  # keep_local=False


def test_a_dataloader_without_length_has_no_epoch_end(logged):
    logged.train_dataloader = SimpleNamespace()  # e.g. a streaming dataset
    hook = LoggerHook(interval=2)
    hook.before_train(logged)
    hook.after_train_iter(logged, 0)
    hook.after_train_iter(logged, 1)
    assert train_iters(logged) == [1]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"interval": 0}, ValueError, "interval must be a positive int"),
        ({"interval_exp_name": 1.5}, ValueError, "interval_exp_name must be a positive int"),
        ({"out_dir": 3}, TypeError, "out_dir must be a path"),
        ({"out_suffix": [".log", 1]}, TypeError, "out_suffix must be str"),
        ({"out_suffix": 5}, TypeError, "out_suffix must be str or strs, got 5"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        LoggerHook(**kwargs)


class DivergingLine(Line):
    """Line whose loss turns NaN from its ``at``-th training step on."""

    def __init__(self, at):
        super().__init__()
        self.at, self.steps = at, 0

    def forward(self, inputs, labels=None, mode="tensor"):
        outputs = super().forward(inputs, labels, mode)
        if mode == "loss":
            self.steps += 1
            if self.steps >= self.at:
                outputs = {"loss": outputs["loss"] * float("nan")}
        return outputs


@pytest.mark.parametrize(("at", "warned"), [(4, True), (100, False)])
def test_a_loss_that_turns_nan_is_warned_about_once(tmp_path, at, warned):
    runner = make_runner(
        tmp_path,
        model=DivergingLine(at),
        default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=2)),
    )
    runner.train()  # training goes on: the warning only says so
    assert runner.iter == 8
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        text = file.read()
    warnings = [line for line in text.splitlines() if "training has diverged" in line]
    if not warned:
        assert warnings == []
        return
    assert len(warnings) == 1  # nan is logged again at iterations 6 and 8, not warned again
    assert (
        " - WARNING - loss=nan by iteration 4 (not finite since iteration 4): training has"
        in (warnings[0])
    )
    assert "optim_wrapper.clip_grad=dict(max_norm=1.0)" in warnings[0]


def test_max_keep_ckpts_keeps_the_last_checkpoint_saved_before_the_loss_turned_nan(tmp_path):
    runner = make_runner(
        tmp_path,
        model=DivergingLine(10),  # from iteration 10 on, in epoch 3 (4 iterations an epoch)
        train_cfg=dict(by_epoch=True, max_epochs=6),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=2),
            logger=dict(type="LoggerHook", interval=2),
        ),
    )
    runner.train()
    kept = os.path.join(runner.work_dir, "epoch_2.pth")  # saved after 8 finite losses
    assert sorted(name for name in os.listdir(runner.work_dir) if name.endswith(".pth")) == [
        "epoch_2.pth",
        "epoch_5.pth",
        "epoch_6.pth",
    ]
    assert runner.message_hub.get_info("last_finite_ckpt") == kept
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        text = file.read()
    assert f"; {kept}, the last checkpoint saved while the losses were finite, is kept" in text
    assert f"Kept {kept} beyond max_keep_ckpts" in text


class SettleWrites(Hook):
    """Lets the writer thread finish (removals included) before each iteration, as it does
    when iterations take longer than a file's fsync: the order of events is then fixed."""

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        wait_for_pending_writes()


def diverging_by_iteration(tmp_path, at, max_iters=12, **kwargs):
    """Checkpoints every 2 iterations, max_keep_ckpts=1, a log every 2; NaN from step ``at``."""
    return make_runner(
        tmp_path,
        custom_hooks=[SettleWrites()],
        model=DivergingLine(at),
        train_cfg=dict(by_epoch=False, max_iters=max_iters),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=2, max_keep_ckpts=1),
            logger=dict(type="LoggerHook", interval=2),
        ),
        **kwargs,
    )


def divergence_warning(runner) -> str:
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        (line,) = [line for line in file if "training has diverged" in line]
    return line


@pytest.mark.parametrize(
    ("at", "left"), [(7, ["iter_12.pth", "iter_6.pth"]), (100, ["iter_12.pth"])]
)
def test_max_keep_ckpts_1_keeps_the_checkpoint_the_warning_names(tmp_path, at, left):
    # iter_6.pth is saved after 6 finite losses; iter_8.pth, after step 7's NaN one, is not
    # finite: iter_6.pth is kept beyond max_keep_ckpts from then on
    runner = diverging_by_iteration(tmp_path, at)
    runner.train()
    assert sorted(name for name in os.listdir(tmp_path) if name.endswith(".pth")) == left
    if at == 100:  # no divergence: at the end the candidate goes, as max_keep_ckpts says
        return
    kept = os.path.join(tmp_path, "iter_6.pth")
    assert runner.message_hub.get_info("last_finite_ckpt") == kept
    assert f"; {kept}, the last checkpoint saved while the losses were finite, is kept" in (
        divergence_warning(runner)
    )


def test_a_resumed_diverged_run_names_the_recorded_finite_checkpoint_not_its_own(tmp_path):
    diverging_by_iteration(tmp_path, 7).train()
    resumed = diverging_by_iteration(tmp_path, 100, max_iters=16, resume=True)  # NaN weights
    resumed.train()
    kept = os.path.join(tmp_path, "iter_6.pth")
    assert f"; {kept}, the last checkpoint saved while the losses were finite" in (
        divergence_warning(resumed)
    )
    assert os.path.isfile(kept)
