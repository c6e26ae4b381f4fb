"""A hook whose point method cannot take the arguments the Runner passes (``def
after_train_iter(self, runner)``) is refused when it is registered, naming the method's
file:line and the signature to write, instead of failing at the first iteration."""

import inspect

import pytest

from runnerx.hooks import Hook
from tests.hooks.test_hooks_with_runner import make_runner


class ShortSigHook(Hook):
    def after_train_iter(self, runner):
        pass


class StarArgsHook(Hook):
    def after_val_epoch(self, runner, *args):
        pass


class CheckpointOnlyHook(Hook):
    def before_save_checkpoint(self, runner):
        pass


class FineHook(Hook):
    """Every way of taking the arguments that works."""

    def __init__(self):
        self.seen = []

    def before_train_iter(self, runner, **kwargs):
        self.seen.append(kwargs["batch_idx"])

    def after_train_iter(self, runner, batch_idx, data_batch, outputs):
        self.seen.append(outputs["loss"] is not None)

    def after_val_epoch(self, runner, metrics):
        pass

    def after_train_epoch(self, *args, **kwargs):
        pass


def where(method) -> str:
    return f"{inspect.getsourcefile(method)}:{method.__code__.co_firstlineno}"


@pytest.mark.parametrize(
    "hook_class, point, written, passed, expected",
    [
        (
            ShortSigHook,
            "after_train_iter",
            "(self, runner)",
            "runner, batch_idx=..., data_batch=..., outputs=...",
            "(self, runner, batch_idx, data_batch=None, outputs=None)",
        ),
        (
            StarArgsHook,
            "after_val_epoch",
            "(self, runner, *args)",
            "runner, metrics=...",
            "(self, runner, metrics=None)",
        ),
        (
            CheckpointOnlyHook,
            "before_save_checkpoint",
            "(self, runner)",
            "runner, checkpoint=...",
            "(self, runner, checkpoint)",
        ),
    ],
)
def test_a_point_method_of_the_wrong_signature_is_refused_at_build(
    tmp_path, hook_class, point, written, passed, expected
):
    message = (
        f"{hook_class.__name__}.{point}{written} ({where(getattr(hook_class, point))}) cannot "
        f"take the arguments the Runner (as MMEngine's) calls it with, {point}({passed}): "
        f"define it as {point}{expected}, or give it **kwargs"
    )
    with pytest.raises(TypeError) as error:
        make_runner(tmp_path / "build", custom_hooks=[hook_class()])
    assert str(error.value) == message
    runner = make_runner(tmp_path / "later")
    with pytest.raises(TypeError) as error:
        runner.register_hook(hook_class())
    assert str(error.value) == message


def test_kwargs_or_all_the_names_are_fine(tmp_path):
    hook = FineHook()
    runner = make_runner(tmp_path, custom_hooks=[hook], train_cfg=dict(by_epoch=True, max_epochs=1))
    runner.train()
    assert hook.seen == [0, True, 1, True, 2, True, 3, True]
