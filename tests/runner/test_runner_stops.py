"""Where a training that stops before its end says it stopped: a hook's ``stop_training``
mid-epoch is one log line, and Ctrl-C during a validation names that validation."""

import pytest

from runnerx.hooks import Hook
from runnerx.runner.cli import report_failure
from tests.runner.test_runner_loop_points import log_of, tiny_runner


class StopAtIter(Hook):
    """Sets ``stop_training`` after iteration ``at`` (1-based), as EarlyStoppingHook would."""

    def __init__(self, at: int):
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            runner.train_loop.stop_training = True


def test_a_stop_mid_epoch_is_logged_with_where_the_epoch_was_cut(tmp_path):
    runner = tiny_runner(tmp_path, dict(by_epoch=True, max_epochs=3), [StopAtIter(6)])
    runner.train()
    assert (runner.epoch, runner.iter) == (2, 6)  # the cut epoch counts as done
    assert (
        "training stopped early (a hook set stop_training) at iteration 6, after batch 2 of 4 "
        "of epoch 2, which counts as done"
    ) in log_of(runner)


def test_a_stop_at_an_epochs_end_says_nothing_of_a_cut(tmp_path):
    runner = tiny_runner(tmp_path / "end", dict(by_epoch=True, max_epochs=3), [StopAtIter(4)])
    runner.train()
    assert (runner.epoch, runner.iter) == (1, 4)
    assert "stopped early" not in log_of(runner)


class StopNowAt(Hook):
    """Sets only ``stop_now`` after iteration ``at``, as a custom preemption hook might; an
    error if training goes on (the epoch loop used to repeat the cut epoch forever)."""

    def __init__(self, at: int):
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            runner.train_loop.stop_now = True
        elif runner.iter + 1 > self.at:
            raise RuntimeError(f"training went on after stop_now, to iteration {runner.iter + 1}")


@pytest.mark.parametrize(
    "train_cfg", [dict(by_epoch=True, max_epochs=3), dict(by_epoch=False, max_iters=12)]
)
def test_stop_now_alone_ends_training_at_once_in_both_loops(tmp_path, train_cfg):
    runner = tiny_runner(tmp_path, train_cfg, [StopNowAt(6)])
    runner.train()
    assert runner.iter == 6 and runner.train_loop.stop_training


class InterruptInValidation(Hook):
    """Raises KeyboardInterrupt (Ctrl-C) in the ``nth`` validation's first batch."""

    def __init__(self, nth: int = 1):
        self.nth, self.seen = nth, 0

    def before_val_iter(self, runner, batch_idx, data_batch=None):
        self.seen += batch_idx == 0
        if self.seen == self.nth:
            raise KeyboardInterrupt


@pytest.mark.parametrize(
    "train_cfg, where",
    [
        (dict(by_epoch=True, max_epochs=2), " during the validation after epoch 1 (iteration 4);"),
        (
            dict(by_epoch=True, max_epochs=2, val_check_interval=0.5),
            " in epoch 2, during the validation after iteration 6;",
        ),
        (
            dict(by_epoch=False, max_iters=8, val_interval=3),
            " during the validation after iteration 3;",
        ),
    ],
    ids=["epoch_end", "mid_epoch", "iterations"],
)
def test_ctrl_c_in_a_validation_of_training_names_it(tmp_path, train_cfg, where):
    # the mid-epoch run validates after iterations 2, 4 (epoch 1's end) and 6
    nth = 3 if "val_check_interval" in train_cfg else 1
    runner = tiny_runner(tmp_path, train_cfg, [InterruptInValidation(nth)])
    with pytest.raises(KeyboardInterrupt) as caught:
        runner.train()
    report_failure(runner, "train", caught.value)
    runner.visualizer.close()  # after_run, which closes it, is not called after Ctrl-C
    (line,) = [line for line in log_of(runner).splitlines() if "interrupted" in line]
    assert f"train interrupted (Ctrl-C){where}" in line
