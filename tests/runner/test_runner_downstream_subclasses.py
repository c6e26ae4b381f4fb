"""Hooks and loops that subclass runnerx's the way OpenMMLab projects subclass MMEngine's:
mmyolo's ParamSchedulerHook without ``super().__init__()`` (and the param-group keys it adds,
which a resume keeps), mmpretrain's EMAHook with MMEngine's private swap methods and a second
evaluation pass through ``val_loop.run_iter``, and eval loops overriding ``run_iter``."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import torch

from runnerx.evaluator import BaseMetric
from runnerx.hooks import EMAHook, Hook, ParamSchedulerHook
from runnerx.runner import Runner, ValLoop
from runnerx.runner import TestLoop as EvalTestLoop  # not collected by pytest
from tests.checkpoint.conftest import ITERS_PER_EPOCH, TinyNet
from tests.checkpoint.tiny_data import TinyData, loader


class WarmupSchedulerHook(ParamSchedulerHook):
    """mmyolo's YOLOv5ParamSchedulerHook style: an ``__init__`` of its own that skips
    ``super().__init__()``, a ``before_train`` that stores ``initial_*`` keys in the param
    groups, a linear warmup in ``before_train_iter``; ``after_train_iter`` is inherited."""

    priority = 9

    def __init__(self, warmup_iters: int = 4, warmup_momentum: float = 0.5):
        self.warmup_iters = warmup_iters
        self.warmup_momentum = warmup_momentum
        self.lrs: list[float] = []

    def before_train(self, runner):
        for group in runner.optim_wrapper.optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
            group.setdefault("initial_momentum", group["momentum"])

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        share = min(runner.iter / self.warmup_iters, 1.0)
        for group in runner.optim_wrapper.optimizer.param_groups:
            group["lr"] = group["initial_lr"] * share
            start, end = self.warmup_momentum, group["initial_momentum"]
            group["momentum"] = start + (end - start) * share
        self.lrs.append(runner.optim_wrapper.optimizer.param_groups[0]["lr"])


class MeanScore(BaseMetric):
    """The mean predicted probability of class 1: it tells which weights predicted."""

    default_prefix = "tiny"

    def __init__(self):
        super().__init__()
        self.grad_enabled: list[bool] = []  # at each batch

    def process(self, data_batch, data_samples) -> None:
        self.grad_enabled.append(torch.is_grad_enabled())
        self.results.extend(data_samples["pred_score"][:, 1].tolist())

    def compute_metrics(self, results: list) -> dict:
        return {"score": sum(results) / len(results)}


def tiny_runner(work_dir: Path, max_epochs: int = 2, **kwargs) -> Runner:
    """TinyNet on 8 samples (4 iterations an epoch), SGD with momentum, validated by
    MeanScore after every epoch, a checkpoint after every epoch."""
    settings = dict(
        model=TinyNet(),
        work_dir=str(work_dir),
        train_dataloader=loader(shuffle=True),
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs, val_interval=1),
        val_dataloader=loader(shuffle=False),
        val_cfg={},
        val_evaluator=MeanScore(),
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}},
        default_hooks={
            "logger": {"type": "LoggerHook", "interval": 100},
            "checkpoint": {"type": "CheckpointHook", "interval": 1},
        },
        experiment_name=f"downstream_{uuid.uuid4().hex}",
        randomness={"seed": 0},
    )
    return Runner(**{**settings, **kwargs})


def with_warmup(hook: WarmupSchedulerHook) -> dict:
    return {
        "logger": {"type": "LoggerHook", "interval": 100},
        "checkpoint": {"type": "CheckpointHook", "interval": 1},
        "param_scheduler": hook,
    }


def test_a_scheduler_hook_that_skips_super_init_builds_and_trains(tmp_path):
    hook = WarmupSchedulerHook()
    runner = tiny_runner(tmp_path, default_hooks=with_warmup(hook))  # logs the hook table
    runner.train()
    assert hook.lrs == pytest.approx([0.0, 0.025, 0.05, 0.075] + [0.1] * ITERS_PER_EPOCH)
    assert runner.optim_wrapper.optimizer.param_groups[0]["momentum"] == pytest.approx(0.9)


def test_a_resume_keeps_the_param_group_keys_a_hook_added(tmp_path):
    tiny_runner(tmp_path, default_hooks=with_warmup(WarmupSchedulerHook())).train()
    saved = torch.load(tmp_path / "epoch_2.pth", weights_only=True)["optimizer"]
    assert saved["param_groups"][0]["initial_momentum"] == pytest.approx(0.9)
    saved["param_groups"][0]["initial_momentum"] = 0.8  # to tell the restored value
    torch.save(
        {**torch.load(tmp_path / "epoch_2.pth", weights_only=True), "optimizer": saved},
        tmp_path / "epoch_2.pth",
    )
    hook = WarmupSchedulerHook()
    resumed = tiny_runner(tmp_path, max_epochs=3, default_hooks=with_warmup(hook), resume=True)
    resumed.train()
    assert resumed.iter == 3 * ITERS_PER_EPOCH
    group = resumed.optim_wrapper.optimizer.param_groups[0]
    assert group["initial_momentum"] == pytest.approx(0.8)  # restored; setdefault kept it
    assert group["momentum"] == pytest.approx(0.8)


class CountIters(Hook):
    """Counts the validation iterations the hooks see."""

    def __init__(self):
        self.val_iters = 0

    def after_val_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.val_iters += 1


class PretrainStyleEMAHook(EMAHook):
    """mmpretrain's EMAHook: swaps with MMEngine's private methods, evaluates the training
    weights a second time through ``val_loop.run_iter`` after validation, and restores the
    average itself when a checkpoint is loaded."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.ema_metrics: list[float] = []
        self.origin_metrics: list[float] = []
        self.loaded_from_ema_state = False

    def before_val_epoch(self, runner):
        self._swap_ema_parameters()

    def after_val_epoch(self, runner, metrics=None):
        self._swap_ema_parameters()
        self.ema_metrics.append(metrics["tiny/score"])
        val_loop = runner.val_loop
        runner.model.eval()
        for idx, data_batch in enumerate(val_loop.dataloader):
            val_loop.run_iter(idx, data_batch)
        origin = val_loop.evaluator.evaluate(len(val_loop.dataloader.dataset))
        self.origin_metrics.append(origin["tiny/score"])
        runner.model.train()

    def after_load_checkpoint(self, runner, checkpoint):
        if "ema_state_dict" in checkpoint and runner._resume:
            self._swap_ema_state_dict(checkpoint)
            self.ema_model.load_state_dict(checkpoint["ema_state_dict"], strict=self.strict_load)
            self.loaded_from_ema_state = True


def score_of(model: TinyNet) -> float:
    inputs = torch.stack([TinyData()[i]["inputs"] for i in range(len(TinyData()))])
    with torch.no_grad():
        return model(inputs).softmax(-1)[:, 1].mean().item()


def test_an_ema_hook_subclass_evaluates_the_average_and_the_training_weights(tmp_path):
    ema, counter, metric = PretrainStyleEMAHook(momentum=0.5), CountIters(), MeanScore()
    runner = tiny_runner(tmp_path, max_epochs=1, custom_hooks=[ema, counter], val_evaluator=metric)
    runner.train()
    assert ema.origin_metrics == pytest.approx([score_of(runner.model)])
    assert ema.ema_metrics == pytest.approx([score_of(ema.ema_model.module)])
    assert ema.ema_metrics != pytest.approx(ema.origin_metrics)
    # run_iter on its own calls the iteration hooks and runs without gradients, as in MMEngine
    assert counter.val_iters == 2 * 4
    assert metric.grad_enabled == [False] * 8


def test_an_ema_hook_subclass_resumes_from_the_training_weights(tmp_path):
    first = PretrainStyleEMAHook(momentum=0.5)
    runner = tiny_runner(tmp_path, max_epochs=1, custom_hooks=[first])
    runner.train()
    trained = {k: v.clone() for k, v in runner.model.state_dict().items()}
    average = {k: v.clone() for k, v in first.ema_model.module.state_dict().items()}
    hook = PretrainStyleEMAHook(momentum=0.5)
    resumed = tiny_runner(tmp_path, max_epochs=1, custom_hooks=[hook], resume=True)
    resumed.train()  # nothing left to train: loads only
    assert hook.loaded_from_ema_state
    for key, value in resumed.model.state_dict().items():
        assert torch.equal(value, trained[key])
    for key, value in hook.ema_model.module.state_dict().items():
        assert torch.equal(value, average[key])


class ZeroInputsMixin:
    """A downstream eval loop that overrides ``run_iter`` (MMEngine's signature) to change
    each batch, here to all-zero inputs, then lets the base class run it."""

    def run_iter(self, idx, data_batch):
        self.seen = [*getattr(self, "seen", []), idx]
        super().run_iter(idx, {**data_batch, "inputs": torch.zeros_like(data_batch["inputs"])})


class ZeroInputsValLoop(ZeroInputsMixin, ValLoop):
    pass


class ZeroInputsTestLoop(ZeroInputsMixin, EvalTestLoop):
    pass


@pytest.mark.parametrize("mode", ["val", "test"])
def test_an_eval_loop_overriding_run_iter_changes_every_batch(tmp_path, mode):
    loop = ZeroInputsValLoop if mode == "val" else ZeroInputsTestLoop
    runner = tiny_runner(
        tmp_path,
        **{
            f"{mode}_dataloader": loader(shuffle=False),
            f"{mode}_cfg": {"type": loop},
            f"{mode}_evaluator": MeanScore(),
        },
    )
    metrics = getattr(runner, mode)()
    expected = runner.model.linear.bias.detach().softmax(-1)[1].item()  # zero inputs
    assert metrics["tiny/score"] == pytest.approx(expected)
    assert getattr(runner, f"{mode}_loop").seen == [0, 1, 2, 3]
