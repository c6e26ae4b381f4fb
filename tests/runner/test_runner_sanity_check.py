"""num_sanity_val_steps: the first N validation batches run through val_step and the
evaluator before training, with no hook called and the training that follows unchanged; from
the config, the Runner, FlexibleRunner and two ranks."""

import json
import os
import random
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from runnerx import HOOKS, LOOPS, METRICS, MODELS, Config
from runnerx.evaluator import BaseMetric
from runnerx.hooks import Hook
from runnerx.model.examples.digits_convnet import DigitsConvNet
from runnerx.runner import Runner
from runnerx.runner.cli import build_runner
from runnerx.runner.sanity_check import run_sanity_check

ROOT = Path(__file__).parents[2]

#: what happened, in order: the model's steps, the metric's evaluate/compute, the hook points
EVENTS: list = []
#: what the last val_step ran under
SEEN: dict = {}


@MODELS.register_module()
class SanityDigitsNet(DigitsConvNet):
    """The digits ConvNet, recording its training and validation steps in EVENTS.
    ``noise=True``: training draws from torch's (dropout), NumPy's and Python's generators,
    and so does each val_step; ``broken_val=True``: val_step raises."""

    def __init__(self, noise=False, broken_val=False, **kwargs):
        super().__init__(**kwargs)
        self.noise = noise
        self.broken_val = broken_val

    def val_step(self, data):
        EVENTS.append("val_step")
        device = next(self.parameters()).device.type
        SEEN.update(
            grad=torch.is_grad_enabled(),
            autocast=torch.is_autocast_enabled(device) and torch.get_autocast_dtype(device),
            training=self.training,
        )
        if self.broken_val:
            raise RuntimeError("val_step is broken")
        if self.noise:
            torch.rand(1), np.random.rand(), random.random()
        return super().val_step(data)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        if mode == "loss":  # a training step, also when DDP's train_step calls it
            EVENTS.append("train_step")
        if mode == "loss" and self.noise:
            scale = 1 + 0.1 * random.random() + 0.1 * float(np.random.rand())
            inputs = F.dropout(inputs, 0.2, training=True) * scale
        return super().forward(inputs, data_samples, mode)


@METRICS.register_module()
class SanitySampleCount(BaseMetric):
    """The samples evaluated; records the size evaluate got and the results it computed on."""

    default_prefix = "count"

    def process(self, data_batch, data_samples):
        self.results.extend(data_samples["gt_label"].tolist())

    def compute_metrics(self, results):
        EVENTS.append(f"computed:{len(results)}")
        return {"samples": len(results)}

    def evaluate(self, size):
        EVENTS.append(f"evaluate:{size}")
        return super().evaluate(size)


_VAL_POINTS = ("before_val", "before_val_epoch", "before_val_iter", "after_val_iter")


@HOOKS.register_module()
class SanityRecorder(Hook):
    """Records before_run, before_train and every val point in EVENTS; at before_train, keeps
    the MessageHub's val scalars and the best checkpoints there are then."""

    def before_run(self, runner):
        EVENTS.append("hook:before_run")

    def before_train(self, runner):
        EVENTS.append("hook:before_train")
        self.val_scalars_at_start = [k for k in runner.message_hub.log_scalars if "val" in k]
        self.best_at_start = sorted(Path(runner.work_dir).rglob("best_*.pth"))

    def after_val_epoch(self, runner, metrics=None):
        EVENTS.append("hook:after_val_epoch")

    def after_val(self, runner):
        EVENTS.append("hook:after_val")


for _point in _VAL_POINTS:
    setattr(
        SanityRecorder, _point, (lambda p: lambda self, *a, **k: EVENTS.append(f"hook:{p}"))(_point)
    )


@pytest.fixture(autouse=True)
def _fresh_events():
    EVENTS.clear()
    SEEN.clear()


def sanity_cfg(cfg: Config, batches, **model) -> Config:
    """The digits config with the recording model, metric and hook, validation batches of
    32 (359 samples: 12 batches) and ``num_sanity_val_steps=batches``."""
    cfg.num_sanity_val_steps = batches
    cfg.model = {**cfg.model, "type": "SanityDigitsNet", **model}
    cfg.custom_hooks = [dict(type="SanityRecorder")]
    cfg.val_dataloader = {**cfg.val_dataloader, "batch_size": 32}
    cfg.val_evaluator = [dict(type="Accuracy", topk=(1,)), dict(type="SanitySampleCount")]
    return cfg


def one_iteration(cfg: Config) -> Config:
    """Train for one iteration, with no validation during training."""
    cfg.train_cfg = dict(by_epoch=False, max_iters=1, val_begin=2)
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=10)
    cfg.log_processor = dict(by_epoch=False)
    return cfg


def before_training() -> list:
    return EVENTS[: EVENTS.index("train_step")]


def log_text(work_dir) -> str:
    (log_file,) = Path(work_dir).glob("*/*.log")
    return log_file.read_text()


def recorder(runner) -> SanityRecorder:
    return next(hook for hook in runner.hooks if isinstance(hook, SanityRecorder))


def test_n_batches_run_before_training_with_no_hook_called(digits_cfg):
    cfg = sanity_cfg(digits_cfg, 2)
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1, save_best="auto")
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert before_training() == [
        "hook:before_run",
        "val_step",
        "val_step",
        "evaluate:64",
        "computed:64",
        "hook:before_train",
    ]
    assert runner.model.training
    record = recorder(runner)
    assert record.val_scalars_at_start == [] and record.best_at_start == []
    # the validation after the epoch is a whole one, with its hooks: a best checkpoint and
    # val scalars, which the sanity check would have left at before_train had it called them
    after = EVENTS[EVENTS.index("train_step") :]
    assert after.count("val_step") == after.count("hook:after_val_iter") == 12
    assert "evaluate:359" in after and after[-1] == "hook:after_val"
    assert list(Path(cfg.work_dir).glob("best_accuracy_top1_epoch_1.pth"))
    assert "val/accuracy/top1" in runner.message_hub.log_scalars
    text = log_text(cfg.work_dir)
    assert re.search(
        r"sanity check: 2 validation batches \(64 samples\) ran through val_step and the "
        r"evaluator in \d+\.\d\d s, before training",
        text,
    )


def scalar_rows(work_dir) -> list[dict]:
    (path,) = Path(work_dir).glob("*/vis_data/scalars.json")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [{k: v for k, v in row.items() if "time" not in k} for row in rows]


def test_training_after_the_check_is_bit_identical_to_training_without_it(tmp_path):
    # the digits dataset's first import of scikit-learn (which imports rich) draws from
    # Python's random: done before the runs, so that it does not happen in the first one only
    import sklearn.datasets  # noqa: F401

    outcomes = []
    for batches in (0, 2):
        cfg = sanity_cfg(Config.fromfile(ROOT / "configs/digits_convnet.py"), batches, noise=True)
        cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
        cfg.default_hooks.logger = dict(type="LoggerHook", interval=1)
        cfg.work_dir = str(tmp_path / str(batches))
        runner = Runner.from_cfg(cfg)
        runner.train()
        weights = {k: v.clone() for k, v in runner.unwrapped_model.state_dict().items()}
        outcomes.append((weights, scalar_rows(cfg.work_dir)))
    (weights0, rows0), (weights2, rows2) = outcomes
    assert weights0.keys() == weights2.keys()
    for key in weights0:
        assert torch.equal(weights0[key], weights2[key]), key
    assert len([row for row in rows0 if "loss" in row]) == 23
    assert rows0 == rows2  # losses, lr, and the validation after the epoch


def test_the_check_runs_as_the_val_loop_and_leaves_generators_and_modes_as_found(digits_cfg):
    cfg = sanity_cfg(digits_cfg, 3, noise=True)
    cfg.val_cfg = dict(fp16=True)
    runner = Runner.from_cfg(cfg)
    runner.val_loop  # noqa: B018  (built as train() builds it)
    model = runner.model
    model.train()
    model.features.eval()  # a frozen part stays in eval mode
    states = (torch.get_rng_state(), np.random.get_state()[1].copy(), random.getstate())
    run_sanity_check(runner)
    assert EVENTS.count("val_step") == 3
    # fp16=True: the device's autocast dtype, as MMEngine's loop (bfloat16 on CPU)
    assert (SEEN["grad"], SEEN["autocast"], SEEN["training"]) == (False, torch.bfloat16, False)
    assert model.training and model.classifier.training and not model.features.training
    assert torch.equal(torch.get_rng_state(), states[0])
    assert (np.random.get_state()[1] == states[1]).all()
    assert random.getstate() == states[2]


def test_minus_one_runs_the_whole_validation_set(digits_cfg):
    runner = Runner.from_cfg(one_iteration(sanity_cfg(digits_cfg, -1)))
    runner.train()
    checked = before_training()
    assert checked.count("val_step") == 12
    assert checked[-3:] == ["evaluate:359", "computed:359", "hook:before_train"]
    assert not [event for event in EVENTS if "val" in event and event.startswith("hook:")]
    assert "sanity check: 12 validation batches (359 samples)" in log_text(digits_cfg.work_dir)


def test_a_bug_in_val_step_fails_before_training_with_a_note(digits_cfg):
    runner = Runner.from_cfg(sanity_cfg(digits_cfg, 2, broken_val=True))
    with pytest.raises(RuntimeError) as info:
        runner.train()
    assert info.value.args == ("val_step is broken",)  # the error itself, unchanged
    assert "train_step" not in EVENTS and runner.iter == 0
    assert EVENTS == ["hook:before_run", "val_step"]
    (note,) = info.value.__notes__
    assert "validation sanity check before training (num_sanity_val_steps=2)" in note
    assert "num_sanity_val_steps=0 turns the check off" in note


@pytest.mark.parametrize("value", [True, False, 1.5, "2", -2, None, [1]])
def test_a_bad_value_is_an_error_naming_the_key(digits_cfg, value):
    digits_cfg.num_sanity_val_steps = value
    with pytest.raises(ValueError, match=r"num_sanity_val_steps must be 0 \(off\), a positive"):
        Runner.from_cfg(digits_cfg)


def test_fast_dev_run_skips_the_check(digits_cfg):
    cfg = sanity_cfg(digits_cfg, 2)
    cfg.fast_dev_run = 1
    Runner.from_cfg(cfg).train()
    assert before_training() == ["hook:before_run", "hook:before_train"]
    assert EVENTS.count("val_step") == 1  # fast_dev_run's own validation, after training
    assert "sanity check" not in log_text(cfg.work_dir)


def test_without_validation_the_key_is_ignored_and_val_test_are_unaffected(digits_cfg):
    cfg = one_iteration(sanity_cfg(digits_cfg, 2))
    no_val = Config(cfg.to_dict())
    no_val.merge_from_dict(dict(val_dataloader=None, val_cfg=None, val_evaluator=None))
    no_val.work_dir = os.path.join(cfg.work_dir, "no_val")
    Runner.from_cfg(no_val).train()
    assert EVENTS == ["hook:before_run", "hook:before_train", "train_step"]
    text = log_text(no_val.work_dir)
    assert "sanity check" not in text and not re.search(r"WARNING.*num_sanity_val_steps", text)

    EVENTS.clear()
    runner = Runner.from_cfg(cfg)
    runner.val()
    assert EVENTS.count("val_step") == EVENTS.count("hook:after_val_iter") == 12
    assert EVENTS.count("evaluate:359") == 1


@LOOPS.register_module()
class SanityUnawareValLoop:
    """A user's own validation loop, which has no evaluate_batches."""

    def __init__(self, runner, dataloader, evaluator):
        self.runner = runner
        self.dataloader = runner.build_dataloader(dataloader)

    def run(self):
        return {}


def test_a_loop_without_evaluate_batches_is_skipped_with_a_warning(digits_cfg):
    cfg = one_iteration(sanity_cfg(digits_cfg, 2))
    cfg.val_cfg = dict(type="SanityUnawareValLoop")
    Runner.from_cfg(cfg).train()
    assert "val_step" not in EVENTS
    assert "SanityUnawareValLoop has no evaluate_batches" in log_text(cfg.work_dir)


def test_flexible_runner_takes_the_key(digits_cfg):
    cfg = one_iteration(sanity_cfg(digits_cfg, 2))
    cfg.runner_type = "FlexibleRunner"
    runner = build_runner(cfg)
    assert runner.num_sanity_val_steps == 2
    runner.train()
    assert before_training()[1:4] == ["val_step", "val_step", "evaluate:64"]
    cfg.num_sanity_val_steps = -3
    with pytest.raises(ValueError, match="num_sanity_val_steps must be"):
        build_runner(cfg)


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    cfg = one_iteration(sanity_cfg(Config.fromfile(ROOT / "configs/digits_convnet.py"), 2))
    cfg.work_dir = out_dir
    cfg.launcher = "pytorch"
    Runner.from_cfg(cfg).train()
    return before_training()


def test_two_ranks_run_the_check_and_the_evaluator_gathers_both(tmp_path, spawn_ranks):
    outcomes = spawn_ranks(run_rank, tmp_path, 2, timeout=120)
    checked = ["hook:before_run", "val_step", "val_step", "evaluate:128"]
    # 2 batches of 32 on each rank: the first 128 samples, computed on rank 0
    assert outcomes[0] == [*checked, "computed:128", "hook:before_train"]
    assert outcomes[1] == [*checked, "hook:before_train"]
