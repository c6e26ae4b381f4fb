"""Ctrl-C once an epoch's iterations are all done, during its end-of-epoch hooks (the
checkpoint save), says so: not "in epoch 2, after iteration 8" as if the epoch were under way;
and Ctrl-C in an iteration's own hooks names that iteration, not the one before."""

import pytest

from runnerx.hooks import Hook
from runnerx.runner.cli import report_failure
from tests.runner.test_runner_loop_points import log_of, tiny_runner


class InterruptSave(Hook):
    """Raises KeyboardInterrupt (Ctrl-C) as the checkpoint of epoch ``epoch`` is saved."""

    def __init__(self, epoch: int):
        self.epoch = epoch

    def before_save_checkpoint(self, runner, checkpoint):
        if runner.epoch + 1 == self.epoch:
            raise KeyboardInterrupt


def interrupted_line(tmp_path, max_epochs: int, hook: Hook, train_cfg=None, checkpoint=None) -> str:
    """The warning a run of ``max_epochs`` (checkpoints every epoch) logs when ``hook``
    raises KeyboardInterrupt, after the log time and level."""
    runner = tiny_runner(
        tmp_path,
        train_cfg or dict(by_epoch=True, max_epochs=max_epochs),
        [hook],
        checkpoint=checkpoint or dict(interval=1),
    )
    with pytest.raises(KeyboardInterrupt) as caught:
        runner.train()
    report_failure(runner, "train", caught.value)
    runner.visualizer.close()  # after_run, which closes it, is not called after Ctrl-C
    (line,) = [line for line in log_of(runner).splitlines() if "interrupted" in line]
    return line.split(" - WARNING - ")[1]


def test_ctrl_c_in_the_save_at_an_epochs_end_names_that_end(tmp_path):
    assert interrupted_line(tmp_path, 3, InterruptSave(2)) == (
        "train interrupted (Ctrl-C) at the end of epoch 2 (its last iteration, 8, done; its "
        "end-of-epoch hooks, such as the checkpoint save, not finished); the last checkpoint "
        f"is {tmp_path / 'epoch_1.pth'} (--resume continues from it)"
    )


def test_ctrl_c_within_an_epoch_still_names_the_iteration(tmp_path):
    class InterruptAtIter(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter + 1 == 6:
                raise KeyboardInterrupt

    assert interrupted_line(tmp_path, 3, InterruptAtIter()).startswith(
        "train interrupted (Ctrl-C) in epoch 2, during the after_train_iter hooks of iteration "
        "6 (its training step done); the last checkpoint is "
    )


def test_ctrl_c_in_an_iteration_checkpoint_save_names_that_iteration(tmp_path):
    # the log's "Saving checkpoint at 6 iterations" comes just before: not "after iteration 5"
    class InterruptIterSave(Hook):
        def before_save_checkpoint(self, runner, checkpoint):
            if runner.iter + 1 == 6:
                raise KeyboardInterrupt

    line = interrupted_line(
        tmp_path,
        0,
        InterruptIterSave(),
        train_cfg=dict(by_epoch=False, max_iters=10, val_interval=100),
        checkpoint=dict(interval=3, by_epoch=False),
    )
    assert line == (
        "train interrupted (Ctrl-C) during the after_train_iter hooks of iteration 6 (its "
        "training step done); the last checkpoint is "
        f"{tmp_path / 'iter_3.pth'} (--resume continues from it)"
    )


def test_ctrl_c_in_the_hooks_that_end_training_names_them(tmp_path):
    class InterruptAfterTrain(Hook):
        def after_train(self, runner):
            raise KeyboardInterrupt

    assert interrupted_line(tmp_path, 2, InterruptAfterTrain()) == (
        "train interrupted (Ctrl-C) after its last iteration (8), in the hooks that end "
        f"training; the last checkpoint is {tmp_path / 'epoch_2.pth'} (--resume continues from it)"
    )


def test_ctrl_c_in_the_last_epochs_save_names_that_epochs_end(tmp_path):
    assert interrupted_line(tmp_path, 2, InterruptSave(2)).startswith(
        "train interrupted (Ctrl-C) at the end of epoch 2"
    )
