"""Writes checkpoints with MMEngine's own Runner, for test_checkpoint_mmengine.py.

    python tests/checkpoint/mmengine_writer.py WORK_DIR

Trains a 4 -> 2 linear classifier (the test's ``TinyNet``: same parameter names; the same 8
samples in batches of 2, from tiny_data.py) for one epoch with AdamW and a LinearLR warm-up,
validates with a metric named ``acc`` and saves ``epoch_1.pth`` and ``best_acc_epoch_1.pth``.
Also writes ``expected.json``: the history MMEngine's message hub holds, to compare with what
runnerx reads.
"""

from __future__ import annotations

import json
import os
import sys

import torch.nn.functional as F
from mmengine.evaluator import BaseMetric
from mmengine.model import BaseModel
from mmengine.runner import Runner
from tiny_data import loader  # this script's folder is on sys.path
from torch import nn


class TinyNet(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.linear(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return [{"pred": row} for row in logits]


class HalfAccuracy(BaseMetric):
    def process(self, data_batch, data_samples) -> None:
        self.results.extend([1] * len(data_samples))

    def compute_metrics(self, results) -> dict:
        return {"acc": 0.5}


def main(work_dir: str) -> None:
    runner = Runner(
        model=TinyNet(),
        work_dir=work_dir,
        train_dataloader=loader(shuffle=True),
        val_dataloader=loader(shuffle=False),
        val_evaluator=[HalfAccuracy()],
        val_cfg={},
        train_cfg={"by_epoch": True, "max_epochs": 1, "val_interval": 1},
        optim_wrapper={"optimizer": {"type": "AdamW", "lr": 0.01}},
        param_scheduler=[{"type": "LinearLR", "start_factor": 0.5, "by_epoch": False, "end": 2}],
        default_hooks={
            "checkpoint": {"type": "CheckpointHook", "interval": 1, "save_best": "auto"}
        },
        randomness={"seed": 0},
    )
    runner.train()
    history = {
        key: {"values": buffer.data[0].tolist(), "counts": buffer.data[1].tolist()}
        for key, buffer in runner.message_hub.log_scalars.items()
    }
    with open(os.path.join(work_dir, "expected.json"), "w") as file:
        json.dump({"history": history}, file)


if __name__ == "__main__":
    main(sys.argv[1])
