"""CheckpointHook's ``max_keep_ckpts`` while the losses are finite (MMEngine's count), and the
last finite checkpoint it keeps beyond the count once a loss or a saved weight is not."""

import os

import pytest
import torch

from runnerx.fileio import wait_for_pending_writes
from runnerx.hooks import Hook
from tests.hooks.test_hooks_with_runner import make_runner


class FilesAtEpochStart(Hook):
    """The checkpoint files at each epoch's start, once the writer thread (removals included)
    is done."""

    priority = "LOWEST"

    def __init__(self):
        self.seen = []

    def before_train_epoch(self, runner):
        wait_for_pending_writes()
        self.seen.append(sorted(n for n in os.listdir(runner.work_dir) if n.endswith(".pth")))


class NanWeightsAfter(Hook):
    """Sets a weight to NaN after iteration ``at`` (its loss was finite), before the save."""

    priority = "NORMAL"  # after the optimizer step, before CheckpointHook (VERY_LOW)

    def __init__(self, at):
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            with torch.no_grad():
                next(runner.model.parameters()).fill_(float("nan"))


def pth_files(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pth"))


@pytest.mark.parametrize("max_keep", [1, 2])
def test_max_keep_ckpts_files_at_every_epoch_start_while_the_losses_are_finite(tmp_path, max_keep):
    watch = FilesAtEpochStart()
    runner = make_runner(
        tmp_path,
        custom_hooks=[watch],
        train_cfg=dict(by_epoch=True, max_epochs=5),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=max_keep),
            # an epoch's last loss is logged before its save: nothing to wait for
            logger=dict(type="LoggerHook", interval=2),
        ),
    )
    runner.train()
    assert watch.seen == [
        [f"epoch_{n}.pth" for n in range(max(done - max_keep, 0) + 1, done + 1)]
        for done in range(5)
    ]
    assert pth_files(tmp_path) == [f"epoch_{n}.pth" for n in range(6 - max_keep, 6)]
    assert runner.message_hub.get_info("last_finite_ckpt") is None


@pytest.mark.parametrize("logger", [dict(type="LoggerHook", interval=2), None])
def test_a_checkpoint_of_nan_weights_saved_after_finite_losses_is_not_the_finite_one(
    tmp_path, logger
):
    runner = make_runner(
        tmp_path,
        custom_hooks=[NanWeightsAfter(8)],  # epoch 2's last iteration: its loss was finite
        train_cfg=dict(by_epoch=True, max_epochs=4),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=1), logger=logger
        ),
    )
    runner.train()
    kept = os.path.join(tmp_path, "epoch_1.pth")
    assert runner.message_hub.get_info("last_finite_ckpt") == kept
    assert pth_files(tmp_path) == ["epoch_1.pth", "epoch_4.pth"]
    if logger is not None:
        with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
            assert f"; {kept}, the last checkpoint saved while the losses were finite" in (
                file.read()
            )
