"""Built-in hooks in a real Runner, as MMEngine users' code meets them: a subclass of a
built-in hook and a train loop of the user's own (cases found by running MMEngine's own hook
tests against runnerx)."""

import uuid

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from runnerx.hooks import EarlyStoppingHook, Hook, ParamSchedulerHook, check_hook_points
from runnerx.model import BaseModel
from runnerx.registry import LOOPS
from runnerx.runner import BaseLoop, Runner


class Line(BaseModel):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(2, 1)

    def forward(self, inputs, labels=None, mode="tensor"):
        outputs = self.linear(torch.stack(inputs)).squeeze(1)
        if mode == "loss":
            return {"loss": ((outputs - torch.stack(labels)) ** 2).mean()}
        return outputs


class Points(Dataset):
    def __init__(self):
        self.inputs = torch.linspace(-1, 1, 16).reshape(8, 2)
        self.labels = self.inputs.sum(1)

    def __len__(self):
        return 8

    def __getitem__(self, index):
        return dict(inputs=self.inputs[index], labels=self.labels[index])


def make_runner(tmp_path, **kwargs):
    settings = dict(
        model=Line(),
        work_dir=str(tmp_path),
        train_dataloader=dict(
            dataset=Points(), sampler=dict(type="DefaultSampler", shuffle=False), batch_size=2
        ),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=2),
        default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=100)),
        experiment_name=f"hooks_{uuid.uuid4().hex}",
    )
    return Runner(**{**settings, **kwargs})


class AnnouncingSchedulerHook(ParamSchedulerHook):
    """A user's subclass: MMEngine's ParamSchedulerHook has no before_train, so a subclass
    that adds one has no reason to call super()."""

    def before_train(self, runner):
        runner.logger.info("the learning rate drops tenfold after the first epoch")


def test_a_scheduler_hook_subclass_without_super_before_train_still_steps(tmp_path):
    runner = make_runner(
        tmp_path,
        param_scheduler=dict(type="MultiStepLR", milestones=[1], gamma=0.1, by_epoch=True),
        default_hooks=dict(
            checkpoint=None,
            logger=dict(type="LoggerHook", interval=100),
            param_scheduler=AnnouncingSchedulerHook(),
        ),
    )
    runner.train()
    logged = list(runner.message_hub.get_scalar("train/lr").data[0])
    assert logged == pytest.approx([0.1] * 4 + [0.01] * 4)


@LOOPS.register_module(force=True)
class FixedStepsLoop(BaseLoop):
    """A user's loop written on BaseLoop, as MMEngine's docs show: it has no stop_training."""

    def __init__(self, runner, dataloader, max_iters=3):
        super().__init__(runner, dataloader)
        self._max_iters = max_iters
        self._iter = 0

    max_epochs = 1
    epoch = 0

    @property
    def max_iters(self):
        return self._max_iters

    @property
    def iter(self):
        return self._iter

    def run(self):
        runner = self.runner
        runner.call_hook("before_train")
        for batch_idx, data_batch in zip(range(self._max_iters), self.dataloader):
            outputs = runner.model.train_step(data_batch, optim_wrapper=runner.optim_wrapper)
            runner.call_hook(
                "after_train_iter", batch_idx=batch_idx, data_batch=data_batch, outputs=outputs
            )
            self._iter += 1
        runner.call_hook("after_train")
        return runner.model


def test_the_custom_loop_runs_without_early_stopping(tmp_path):
    runner = make_runner(tmp_path, train_cfg=dict(type="FixedStepsLoop", max_iters=3))
    runner.train()
    assert runner.train_loop.iter == 3


def test_early_stopping_with_a_loop_that_cannot_stop_is_an_error_before_training(tmp_path):
    runner = make_runner(
        tmp_path,
        train_cfg=dict(type="FixedStepsLoop", max_iters=3),
        custom_hooks=[dict(type="EarlyStoppingHook", monitor="loss")],
    )
    with pytest.raises(TypeError, match=r"FixedStepsLoop has no 'stop_training' attribute"):
        runner.train()
    assert runner.train_loop.iter == 0


def test_early_stopping_accepts_the_built_in_loops(tmp_path):
    runner = make_runner(tmp_path)
    hook = EarlyStoppingHook(monitor="loss")
    hook.before_train(runner)  # the built-in loop can stop: no error
    assert runner.train_loop.stop_training is False


class MisnamedHook(Hook):
    """A user's hook with two methods named almost like hook points, and a helper."""

    def after_train_iteration(self, runner, batch_idx, data_batch=None, outputs=None):
        raise AssertionError("never called")

    def before_epoch(self, runner):
        raise AssertionError("never called")

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.called = True

    def log_line(self):  # not named like a point: no warning
        pass


class AnotherMisnamedHook(MisnamedHook):
    """The same methods under another class name (the logger drops an exact repeat)."""


def test_a_method_named_like_a_hook_point_that_is_none_is_warned_of(tmp_path):
    runner = make_runner(tmp_path, custom_hooks=[MisnamedHook()])
    runner.register_hook(AnotherMisnamedHook())
    runner.train()
    log = next(tmp_path.glob("*/*.log")).read_text()
    # MisnamedHook's from custom_hooks, AnotherMisnamedHook's from register_hook
    assert log.count("AnotherMisnamedHook.after_train_iteration is not a hook point") == 1
    assert log.count("MisnamedHook.after_train_iteration is not a hook point") == 2
    assert "did you mean 'after_train_iter'" in log
    assert "MisnamedHook.before_epoch is not a hook point" in log
    # MMCV 1.x's mode-less point: each mode's, training first
    assert "did you mean 'before_train_epoch' or 'before_val_epoch' or 'before_test_epoch'?" in log
    assert "log_line" not in log and "after_train_iter is not" not in log
    misnamed = [hook for hook in runner.hooks if isinstance(hook, MisnamedHook)]
    assert len(misnamed) == 2 and all(getattr(hook, "called", False) for hook in misnamed)


def test_the_built_in_hooks_pass_the_hook_point_checks():
    import runnerx.hooks as hooks_package

    classes = [getattr(hooks_package, name) for name in hooks_package.__all__]
    hook_classes = [c for c in classes if isinstance(c, type) and issubclass(c, Hook)]
    assert len(hook_classes) > 10
    assert [w for c in hook_classes for w in check_hook_points(c.__new__(c))] == []


def test_an_epoch_scheduler_in_an_iteration_loop_is_warned_of_once_and_named(tmp_path):
    runner = make_runner(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=6, val_interval=6),
        param_scheduler=[
            dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=2),
            dict(type="StepLR", step_size=1, gamma=0.1, by_epoch=True),
        ],
    )
    runner.train()
    log = next(tmp_path.glob("*/*.log")).read_text()
    assert log.count("never steps while training") == 1
    assert "param_scheduler[1] (type='StepLR') steps by epoch" in log
    assert "param_scheduler[0]" not in log
    assert "IterBasedTrainLoop" in log and "convert_to_iter_based=True" in log
    logged = list(runner.message_hub.get_scalar("train/lr").data[0])
    assert logged[2:] == pytest.approx([0.1] * 4)  # StepLR never took the lr down


@pytest.mark.parametrize(
    "scheduler",
    [
        dict(type="StepLR", step_size=1, gamma=0.1, by_epoch=True, convert_to_iter_based=True),
        dict(type="ReduceOnPlateauLR", monitor="loss", by_epoch=True),
        dict(type="StepLR", step_size=1, gamma=0.1, by_epoch=False),
    ],
)
def test_schedulers_an_iteration_loop_steps_are_not_warned_of(tmp_path, scheduler):
    runner = make_runner(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=2, val_interval=2),
        param_scheduler=scheduler,
    )
    runner.train()
    assert "never steps" not in next(tmp_path.glob("*/*.log")).read_text()


def test_an_epoch_scheduler_in_an_epoch_loop_is_not_warned_of(tmp_path):
    runner = make_runner(tmp_path, param_scheduler=dict(type="StepLR", step_size=1))
    runner.train()
    assert "never steps" not in next(tmp_path.glob("*/*.log")).read_text()
