"""train_cfg.dynamic_intervals: the validation interval changes at milestones (MMEngine's)."""

from bisect import bisect_right
from pathlib import Path

import pytest

from runnerx import HOOKS
from runnerx.hooks import Hook
from runnerx.runner import Runner


@HOOKS.register_module()
class ValidationLogHook(Hook):
    """Notes after which epoch/iteration each validation ran, and the interval hooks saw."""

    def __init__(self):
        self.validated = []
        self.intervals = []

    def before_train_epoch(self, runner):
        self.intervals.append(runner.train_loop.val_interval)

    def after_val_epoch(self, runner, metrics=None):
        loop = runner.train_loop
        self.validated.append(loop.epoch if loop.unit == "epoch" else loop.iter)


def mmengine_due(total, val_interval, dynamic_intervals, val_begin=1):
    """When MMEngine's documentation says its loops validate, from its own milestone table
    (its loops look one epoch ahead and switch one early: see EpochBasedTrainLoop)."""
    from mmengine.runner.utils import calc_dynamic_intervals

    milestones, intervals = calc_dynamic_intervals(val_interval, dynamic_intervals)
    due = []
    for done in range(1, total + 1):
        interval = intervals[bisect_right(milestones, done) - 1]
        if done >= val_begin and (done % interval == 0 or done == total):
            due.append(done)
    return due


def run(cfg):
    runner = Runner.from_cfg(cfg)
    runner.train()
    return next(h for h in runner.hooks if isinstance(h, ValidationLogHook))


def test_epoch_loop_validates_at_each_interval_from_its_milestone_on(digits_cfg):
    cfg = digits_cfg
    cfg.merge_from_dict({"train_cfg.max_epochs": 7, "param_scheduler.1.end": 7})
    cfg.train_cfg.val_interval = 3
    cfg.train_cfg.dynamic_intervals = [(4, 1), (6, 2)]
    cfg.default_hooks.checkpoint.interval = 100
    cfg.custom_hooks = [dict(type="ValidationLogHook")]
    hook = run(cfg)
    expected = mmengine_due(7, 3, [(4, 1), (6, 2)])
    assert hook.validated == expected == [3, 4, 5, 6, 7]
    assert hook.intervals == [3, 3, 3, 1, 1, 2, 2]


def test_iteration_loop_validates_at_each_interval_from_its_milestone_on(digits_cfg):
    cfg = digits_cfg
    cfg.train_cfg = dict(by_epoch=False, max_iters=30, val_interval=12, dynamic_intervals=[(20, 5)])
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=100)
    cfg.log_processor = dict(by_epoch=False)
    cfg.custom_hooks = [dict(type="ValidationLogHook")]
    hook = run(cfg)
    assert hook.validated == mmengine_due(30, 12, [(20, 5)]) == [12, 20, 25, 30]


@pytest.mark.parametrize(
    "dynamic_intervals",
    [[(4, 1), (3, 2)], [(0, 1)], [(4,)], [("4", 1)], [(4, True)], [4]],
)
def test_bad_dynamic_intervals_name_the_key(digits_cfg, dynamic_intervals):
    digits_cfg.train_cfg.dynamic_intervals = dynamic_intervals
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(ValueError, match=r"train_cfg\.dynamic_intervals\[\d\] must be a"):
        runner.train()


@pytest.mark.parametrize("val_interval", [0, -1, 1.5, True])
def test_a_val_interval_that_cannot_count_is_refused_before_training(digits_cfg, val_interval):
    digits_cfg.train_cfg.val_interval = val_interval
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(
        ValueError,
        match=rf"train_cfg\.val_interval must be a positive int .*"
        rf"got {val_interval!r}; to train without validation leave out",
    ):
        runner.train()
    assert runner.iter == 0


def test_without_validation_a_zero_val_interval_trains_as_in_mmengine(digits_cfg):
    digits_cfg.merge_from_dict({"train_cfg.max_epochs": 1, "train_cfg.val_interval": 0})
    for key in ("val_dataloader", "val_cfg", "val_evaluator"):
        digits_cfg[key] = None
    digits_cfg.default_hooks.checkpoint.save_best = None
    runner = Runner.from_cfg(digits_cfg)
    runner.train()
    assert runner.epoch == 1


def test_a_val_begin_after_the_last_epoch_is_warned_about(digits_cfg):
    digits_cfg.merge_from_dict({"train_cfg.max_epochs": 1, "train_cfg.val_begin": 5})
    digits_cfg.custom_hooks = [dict(type="ValidationLogHook")]
    hook = run(digits_cfg)
    assert hook.validated == []
    log = next((Path(digits_cfg.work_dir)).glob("*/*.log")).read_text()
    assert "WARNING - train_cfg.val_begin=5 is after the last epoch (1): no validation" in log


def test_an_infinite_sampler_is_refused_by_the_epoch_loop(digits_cfg):
    digits_cfg.train_dataloader.sampler = dict(type="InfiniteSampler", shuffle=True)
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(
        ValueError,
        match=r"sampler is InfiniteSampler, which never ends an epoch"
        r".*DefaultSampler.*by_epoch=False",
    ):
        runner.train()
