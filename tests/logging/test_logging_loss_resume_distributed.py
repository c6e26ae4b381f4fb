"""Two real ranks (gloo, CPU) resume a run: the losses logged after the resume are those the
uninterrupted run logs at the same iterations, also in the window that still holds values
from before the resume (the checkpoint keeps the loss histories averaged over the ranks)."""

import json
import os

import pytest
import torch

from runnerx.hooks import Hook
from tests.logging.test_logging_loss_mean_distributed import (  # noqa: F401 (registers the model)
    LossIsTheDataNet,
    squares_dataloader,
)

WORLD_SIZE = 2
ITERS, SAVED_AT, INTERVAL, WINDOW = 12, 6, 4, 3


class KeepLoadedLoss(Hook):
    """Keeps the loss history this rank's hub holds right after a resume."""

    def __init__(self):
        self.loaded = None

    def before_train(self, runner):
        buffer = runner.message_hub.log_scalars.get("train/loss")
        self.loaded = None if buffer is None else [float(v) for v in buffer.data[0]]


def train(rank, out_dir, name, resume=None):
    """A run of ITERS iterations on this rank (saved at SAVED_AT; resumed from ``resume``);
    the work dir's scalars.json rows by step, and the loss history it resumed with."""
    from runnerx.runner import Runner

    keep = KeepLoadedLoss()
    runner = Runner(
        model=dict(type="LossIsTheDataNet"),
        work_dir=os.path.join(out_dir, name),
        train_dataloader=squares_dataloader(),  # the ranks' losses differ
        train_cfg=dict(by_epoch=False, max_iters=ITERS, val_interval=ITERS + 1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.0)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=INTERVAL),
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=SAVED_AT),
        ),
        log_processor=dict(
            by_epoch=False,
            window_size=WINDOW,
            custom_cfg=[
                dict(data_src="loss", log_name="loss_all", method_name="mean", window_size="global")
            ],
        ),
        custom_hooks=[keep],
        launcher="pytorch",
        resume=resume or False,
        experiment_name=name,
    )
    runner.train()
    (log_dir,) = [entry.path for entry in os.scandir(runner.work_dir) if entry.is_dir()]
    with open(os.path.join(log_dir, "vis_data", "scalars.json")) as file:
        rows = {row["step"]: row for row in map(json.loads, file)}
    return rows, keep.loaded


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    whole, _ = train(rank, out_dir, "whole")
    saved = os.path.join(out_dir, "whole", f"iter_{SAVED_AT}.pth")
    resumed, loaded = train(rank, out_dir, "resumed", resume=saved)
    return whole, resumed, loaded


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    folder = tmp_path_factory.mktemp("loss_resume")
    return spawn_ranks(run_rank, folder, WORLD_SIZE, timeout=180)


def test_the_losses_logged_after_a_resume_are_the_uninterrupted_runs(ranks):
    whole, resumed, _ = ranks[0]
    assert sorted(resumed) == [8, 12]
    # the window of iteration 8 holds iteration 6's loss, saved before the resume
    for step in (8, 12):
        for key in ("loss", "loss_double", "loss_all"):
            assert resumed[step][key] == pytest.approx(whole[step][key], rel=1e-12), (step, key)


def test_every_rank_resumes_the_same_rank_averaged_history(ranks):
    loaded = [outcome[2] for outcome in ranks]
    assert loaded[0] == loaded[1]
    # the samples before the resume: rank r's iteration i reads 4i + r and 4i + r + 2; the
    # loss is three times the mean input, and the history averages the two ranks'
    per_rank = [
        [3 * ((4 * i + r) ** 2 + (4 * i + r + 2) ** 2) / 2 for i in range(SAVED_AT)]
        for r in range(WORLD_SIZE)
    ]
    assert loaded[0] == pytest.approx([(a + b) / 2 for a, b in zip(*per_rank)])
