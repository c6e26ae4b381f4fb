"""Two real ranks (gloo, CPU) train with a Runner and see different data: the loss that the
log line and scalars.json show is the mean over both ranks, and both ranks take part."""

import json
import os

import pytest
import torch
from torch import nn

from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.registry import MODELS

WORLD_SIZE = 2
ITERS, INTERVAL, WINDOW = 12, 4, 3


@MODELS.register_module(force=True)
class LossIsTheDataNet(BaseModel):
    """Its losses are the mean of the batch's inputs (times a weight of 1 that lr=0 keeps)
    and twice that, plus an 'acc' that is not a loss: each rank's values are its data's."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor)
        self.weight = nn.Parameter(torch.ones(()))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        value = (inputs * self.weight).mean()
        if mode == "loss":
            return {"loss": value, "loss_double": 2 * value, "acc": value.detach() + 100}
        return value


def squares_dataloader() -> dict:
    """48 samples whose input is i * i, in order, batches of 2: rank r reads the samples
    r, r + 2, r + 4, ..., so rank 1's losses are larger than rank 0's."""
    dataset = [dict(inputs=torch.tensor([float(i * i)]), data_samples=0) for i in range(48)]
    return dict(
        dataset=dataset,
        batch_size=2,
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
    )


class RecordOutputs(Hook):
    """Keeps this rank's own (not averaged) outputs of every iteration."""

    def __init__(self):
        self.outputs = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.outputs.append({key: float(value) for key, value in outputs.items()})


def train(rank, out_dir):
    """Train on this rank; return its own outputs of every iteration."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    from runnerx.runner import Runner

    recorder = RecordOutputs()
    runner = Runner(
        model=dict(type="LossIsTheDataNet"),
        work_dir=os.path.join(out_dir, "work"),
        train_dataloader=squares_dataloader(),
        train_cfg=dict(by_epoch=False, max_iters=ITERS, val_interval=ITERS + 1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.0)),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=INTERVAL), checkpoint=None),
        log_processor=dict(by_epoch=False, window_size=WINDOW),
        custom_hooks=[recorder],
        launcher="pytorch",
        experiment_name="loss_mean",
    )
    runner.train()
    return recorder.outputs


def run_rank(rank, out_dir):
    return train(rank, out_dir)  # the Runner is gone before the process group


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    folder = tmp_path_factory.mktemp("loss_mean")
    return folder, spawn_ranks(run_rank, folder, WORLD_SIZE, timeout=180)


def _window_mean(outputs, key, step):
    """The smoothed value one rank alone would log after ``step`` iterations."""
    return sum(row[key] for row in outputs[step - WINDOW : step]) / WINDOW


def test_logged_losses_are_the_mean_over_ranks(ranks):
    folder, outputs = ranks
    (log_dir,) = [path for path in (folder / "work").iterdir() if path.is_dir()]
    rows = [
        json.loads(line)
        for line in (log_dir / "vis_data" / "scalars.json").read_text().splitlines()
    ]
    assert [row["step"] for row in rows] == list(range(INTERVAL, ITERS + 1, INTERVAL))
    log_text = (log_dir / f"{log_dir.name}.log").read_text()
    for row in rows:
        step = row["step"]
        for key in ("loss", "loss_double"):
            own = [_window_mean(outputs[rank], key, step) for rank in range(WORLD_SIZE)]
            assert own[0] != pytest.approx(own[1])  # the ranks saw different data
            assert row[key] == pytest.approx(sum(own) / WORLD_SIZE)
        assert f"loss: {row['loss']:.4f}" in log_text
        # not a loss (and not smoothed): rank 0's own newest value, as MMEngine logs it
        assert row["acc"] == outputs[0][step - 1]["acc"] != outputs[1][step - 1]["acc"]


def test_the_ranks_log_their_own_values_into_their_hub(ranks):
    _, outputs = ranks
    assert len(outputs[0]) == len(outputs[1]) == ITERS
    # rank 0 reads the samples 0 and 2 first, rank 1 the samples 1 and 3 ('loss' is the
    # sum of the two losses: three times the mean input)
    assert outputs[0][0]["loss"] == 3 * (0 + 4) / 2
    assert outputs[1][0]["loss"] == 3 * (1 + 9) / 2
