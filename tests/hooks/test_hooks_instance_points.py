"""A hook point set on the hook instance (``self.before_train = ...`` in ``__init__``, a test's
``hook.after_train_iter = Mock()``) is called, as MMEngine calls it: ``overridden_points``
counts it, the per-point lists the loops build after ``before_train`` hold it, and
``check_hook_points`` checks the signature of a function set so."""

from unittest.mock import Mock

import pytest

from runnerx.hooks import (
    CheckpointHook,
    EmptyCacheHook,
    Hook,
    ParamSchedulerHook,
    check_hook_points,
    format_hook_table,
)
from tests.hooks.test_hooks_with_runner import make_runner

ONE_EPOCH = dict(by_epoch=True, max_epochs=1)  # 4 iterations


class Monkey(Hook):
    """Sets its points in ``__init__`` and, for one more, in ``before_train``."""

    def __init__(self):
        self.calls = []
        self.before_train = self._start

    def _start(self, runner):
        self.calls.append("before_train")
        self.after_train_epoch = lambda runner: self.calls.append("after_train_epoch")


def test_points_set_on_the_instance_are_called(tmp_path):
    hook = Monkey()
    hook.after_train_iter = Mock()
    assert hook.overridden_points() == ["before_train", "after_train_iter"]
    table = format_hook_table([hook])
    assert "before_train:\n(NORMAL      ) Monkey" in table
    assert "after_train_iter:\n(NORMAL      ) Monkey" in table
    runner = make_runner(tmp_path, custom_hooks=[hook], train_cfg=ONE_EPOCH)
    runner.train()
    assert hook.calls == ["before_train", "after_train_epoch"]
    calls = hook.after_train_iter.call_args_list
    assert [call.kwargs["batch_idx"] for call in calls] == [0, 1, 2, 3]
    assert all(call.args == (runner,) for call in calls)


def test_a_mode_generic_point_set_on_the_instance_stands_for_its_points():
    hook = Hook()
    hook._after_epoch = Mock()
    assert hook.overridden_points() == ["after_train_epoch", "after_val_epoch", "after_test_epoch"]


def test_a_value_that_is_not_callable_is_no_point():
    hook = Hook()
    hook.before_train = None
    assert hook.overridden_points() == []


def test_a_function_set_on_the_instance_that_cannot_take_the_arguments_is_refused(tmp_path):
    hook = Hook()
    hook.after_val_epoch = lambda runner: None
    line = hook.after_val_epoch.__code__.co_firstlineno
    with pytest.raises(TypeError) as error:
        make_runner(tmp_path, custom_hooks=[hook])
    assert str(error.value) == (
        f"Hook.after_val_epoch (set on the instance)(runner) ({__file__}:{line}) cannot take "
        "the arguments the Runner (as MMEngine's) calls it with, after_val_epoch(runner, "
        "metrics=...): define it as after_val_epoch(runner, metrics=None), or give it **kwargs"
    )


def test_a_mock_set_on_the_instance_passes_the_check():
    hook = Hook()
    hook.after_train_iter = Mock()
    hook.before_train = lambda runner, **kwargs: None
    assert check_hook_points(hook) == []


@pytest.mark.parametrize(
    ("hook", "point"),
    [
        (lambda: CheckpointHook(interval=1, by_epoch=True), "after_train_iter"),
        (lambda: ParamSchedulerHook(), "after_train_iter"),
        (lambda: EmptyCacheHook(after_iter=False), "after_train_iter"),
    ],
)
def test_a_patched_point_a_builtin_hook_leaves_out_is_called(hook, point):
    # the point this configuration never acts at is left out, unless the instance sets it
    built = hook()
    if isinstance(built, ParamSchedulerHook):
        built._source, built._by_iter = "found", False  # before_train found none by iteration
    assert point not in built.overridden_points()
    setattr(built, point, Mock())
    assert point in built.overridden_points()
