"""Trains until killed, saving a checkpoint after every iteration (test_checkpoint_crash_safety).

    python tests/checkpoint/checkpoint_writer.py WORK_DIR

A small linear layer trained with SGD with momentum, next to an 8 MB buffer: each
``iter_N.pth`` is about 8 MB while a training step stays tiny, so most of the process's time
is spent saving. ``CheckpointHook``
keeps the 3 newest; the run resumes from ``WORK_DIR/last_checkpoint`` when there is one and
prints ``training from iteration N`` (on stdout) once training starts.
"""

from __future__ import annotations

import sys

import torch
from torch import nn
from torch.utils.data import Dataset

from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.runner import Runner

WIDTH = 64
MAX_KEEP_CKPTS = 3


class LinearWithTable(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(WIDTH, WIDTH)
        self.register_buffer("table", torch.zeros(2048, 1024))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        outputs = self.linear(inputs)
        return {"loss": outputs.pow(2).mean()} if mode == "loss" else outputs


class Ones(Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> dict:
        return {"inputs": torch.ones(WIDTH)}


class AnnounceStart(Hook):
    priority = "LOWEST"  # after CheckpointHook has cleaned up and settled its folder

    def before_train(self, runner) -> None:
        print(f"training from iteration {runner.iter}", flush=True)


def main(work_dir: str) -> None:
    torch.set_num_threads(1)
    runner = Runner(
        model=LinearWithTable(),
        work_dir=work_dir,
        train_dataloader={
            "dataset": Ones(),
            "batch_size": 2,
            "sampler": {"type": "DefaultSampler", "shuffle": False},
            "collate_fn": {"type": "default_collate"},
        },
        train_cfg={"by_epoch": False, "max_iters": 1_000_000},
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 1e-3, "momentum": 0.9}},
        default_hooks={
            "logger": {"type": "LoggerHook", "interval": 1_000_000},
            "checkpoint": {
                "type": "CheckpointHook",
                "interval": 1,
                "by_epoch": False,
                "max_keep_ckpts": MAX_KEEP_CKPTS,
            },
        },
        custom_hooks=[AnnounceStart()],
        resume=True,
        log_level="WARNING",
    )
    runner.train()


if __name__ == "__main__":
    main(sys.argv[1])
