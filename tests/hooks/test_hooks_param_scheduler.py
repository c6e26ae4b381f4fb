"""ParamSchedulerHook: the right schedulers step at the right points."""

import pytest
import torch

from runnerx.hooks import ParamSchedulerHook


class CountingScheduler:
    def __init__(self, by_epoch, need_val_args=False):
        self.by_epoch = by_epoch
        self.need_val_args = need_val_args
        self.steps = []

    def step(self, metrics=None):
        self.steps.append(metrics)


def test_iteration_schedulers_step_every_iteration_and_epoch_ones_every_epoch(runner, train):
    by_iter, by_epoch = CountingScheduler(by_epoch=False), CountingScheduler(by_epoch=True)
    runner.param_schedulers = [by_iter, by_epoch]
    train(runner, [ParamSchedulerHook()], epochs=2)
    assert len(by_iter.steps) == 8 and len(by_epoch.steps) == 2


def test_a_dict_of_lists_steps_every_optimizer_schedulers(runner, train):
    gen = [CountingScheduler(False), CountingScheduler(True)]
    disc = [CountingScheduler(False)]
    runner.param_schedulers = {"generator": gen, "discriminator": disc}
    train(runner, [ParamSchedulerHook()], epochs=1)
    assert [len(s.steps) for s in (*gen, *disc)] == [4, 1, 4]


def test_a_real_torch_scheduler_changes_the_learning_rate_per_iteration(runner, train):
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    scheduler.by_epoch = False
    runner.param_schedulers = [scheduler]
    # 4 iterations (the optimizer steps first, as in train_step): halved twice
    train(runner, [ParamSchedulerHook()], epochs=1, outputs=lambda _: optimizer.step())
    assert optimizer.param_groups[0]["lr"] == pytest.approx(0.25)


def test_schedulers_that_need_metrics_get_them_after_validation(runner):
    plateau, plain = CountingScheduler(True, need_val_args=True), CountingScheduler(True)
    runner.param_schedulers = [plateau, plain]
    hook = ParamSchedulerHook()
    hook.before_train(runner)
    hook.after_val_epoch(runner, {"loss": 0.3})
    hook.after_val_epoch(runner, None)
    assert plateau.steps == [{"loss": 0.3}] and plain.steps == []


def test_after_train_iter_is_left_out_once_no_scheduler_steps_by_iteration(runner):
    hook = ParamSchedulerHook()
    assert "after_train_iter" in hook.overridden_points()  # unknown before before_train
    runner.param_schedulers = [CountingScheduler(by_epoch=True)]
    hook.before_train(runner)
    assert "after_train_iter" not in hook.overridden_points()
    assert "after_train_epoch" in hook.overridden_points()
    runner.param_schedulers = [CountingScheduler(by_epoch=True), CountingScheduler(False)]
    hook.before_train(runner)
    assert "after_train_iter" in hook.overridden_points()


class OwnInitSchedulerHook(ParamSchedulerHook):
    """mmyolo's style: an ``__init__`` that does not call ``super().__init__()``."""

    def __init__(self, factor=0.5):
        self.factor = factor


def test_a_subclass_that_skips_super_init_steps_the_schedulers(runner, train):
    by_iter, by_epoch = CountingScheduler(by_epoch=False), CountingScheduler(by_epoch=True)
    runner.param_schedulers = [by_iter, by_epoch]
    hook = OwnInitSchedulerHook()
    assert "after_train_iter" in hook.overridden_points()  # the hook table asks at build time
    train(runner, [hook], epochs=2)
    assert len(by_iter.steps) == 8 and len(by_epoch.steps) == 2


class ClipAfterIterHook(ParamSchedulerHook):
    """A subclass with an ``after_train_iter`` of its own (it clips the lr of each step)."""

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        super().after_train_iter(runner, batch_idx, data_batch, outputs)
        runner.clipped = getattr(runner, "clipped", 0) + 1


def test_a_subclass_own_after_train_iter_is_kept_without_iteration_schedulers(runner, train):
    runner.param_schedulers = [CountingScheduler(by_epoch=True)]
    train(runner, [ClipAfterIterHook()], epochs=1)
    assert runner.clipped == 4


def test_no_schedulers_is_fine(runner, train):
    runner.param_schedulers = None
    train(runner, [ParamSchedulerHook()], epochs=1)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (CountingScheduler(True), "must be a list of schedulers, a dict"),
        ({"gen": CountingScheduler(True)}, r"param_schedulers\['gen'\] must be a list"),
    ],
)
def test_a_wrong_param_schedulers_type_is_named(runner, value, message):
    runner.param_schedulers = value
    with pytest.raises(TypeError, match=message):
        ParamSchedulerHook().before_train(runner)


def test_param_schedulers_replaced_during_training_are_the_ones_stepped(runner):
    # MMEngine reads runner.param_schedulers at every step; a hook may swap them mid-run
    first, second = CountingScheduler(by_epoch=True), CountingScheduler(by_epoch=True)
    runner.param_schedulers = [first]
    hook = ParamSchedulerHook()
    hook.before_train(runner)
    hook.after_train_epoch(runner)
    runner.param_schedulers = [second]
    hook.after_train_epoch(runner)
    assert (len(first.steps), len(second.steps)) == (1, 1)
