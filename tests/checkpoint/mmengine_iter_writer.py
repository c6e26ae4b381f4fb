"""Writes iteration-based checkpoints with MMEngine's own Runner, and what MMEngine's runs
resumed from them train on, for test_checkpoint_mmengine_data.py.

    python tests/checkpoint/mmengine_iter_writer.py WORK_DIR

For each sampler, an IterBasedTrainLoop run of the TinyNet of mmengine_writer.py on the 8
samples of tiny_data.py in batches of 2 (4 batches a pass) saves ``<sampler>/iter_<k>.pth``,
and MMEngine resumes that checkpoint to the end: InfiniteSampler saves at iteration 2 of 4
(the two frameworks' InfiniteSampler orders agree in the first pass only, docs/data.md),
DefaultSampler at iteration 5 of 7 (in its second pass). ``expected.json`` holds the sample
indices of each iteration the resumed runs trained.
"""

from __future__ import annotations

import json
import os
import sys
import time
from types import SimpleNamespace

import mmengine.runner.loops
from mmengine.hooks import Hook
from mmengine.runner import Runner
from mmengine_writer import TinyNet  # this script's folder is on sys.path
from tiny_data import loader, sample_indices

#: sampler -> (the iteration saved, max_iters)
RUNS = {"InfiniteSampler": (2, 4), "DefaultSampler": (5, 7)}


class RecordBatches(Hook):
    """Keeps the sample indices of every training iteration: ``{iteration: [indices]}``."""

    def __init__(self) -> None:
        self.batches: dict[int, list[int]] = {}

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        self.batches[runner.iter + 1] = sample_indices(data_batch["inputs"])


def train(work_dir: str, sampler: str, save_at: int, max_iters: int, resume: str | None) -> dict:
    dataloader = loader(shuffle=True)
    dataloader["sampler"]["type"] = sampler
    record = RecordBatches()
    Runner(
        model=TinyNet(),
        work_dir=work_dir,
        experiment_name=f"{sampler}_{'resumed' if resume else 'first'}",
        train_dataloader=dataloader,
        train_cfg={"by_epoch": False, "max_iters": max_iters, "val_interval": max_iters},
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.1}},
        default_hooks={
            "checkpoint": {"type": "CheckpointHook", "by_epoch": False, "interval": save_at}
        },
        custom_hooks=[record],
        randomness={"seed": 0},
        load_from=resume,
        resume=resume is not None,
    ).train()
    return record.batches


def main(work_dir: str) -> None:
    # MMEngine 0.10 reads its own checkpoints with torch.load's old default only
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    # its loop sleeps 2 s at the end of each pass (for worker processes; there are none here)
    mmengine.runner.loops.time = SimpleNamespace(sleep=lambda seconds: None, time=time.time)
    expected = {}
    for sampler, (save_at, max_iters) in RUNS.items():
        folder = os.path.join(work_dir, sampler)
        train(folder, sampler, save_at, max_iters, None)
        checkpoint = os.path.join(folder, f"iter_{save_at}.pth")
        expected[sampler] = train(folder + "_resumed", sampler, save_at, max_iters, checkpoint)
    with open(os.path.join(work_dir, "expected.json"), "w") as file:
        json.dump(expected, file)


if __name__ == "__main__":
    main(sys.argv[1])
