"""A model sharded by FSDP evaluated by two real ranks (gloo, CPU) whose val dataloader gives
them different numbers of batches (``round_up=False``): refused before the first batch with
the cure, where the ranks would otherwise crash or hang in the sharded forward; with
``round_up=True`` the same split evaluates."""

import os
from pathlib import Path

import torch

from runnerx import Config
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


def evaluate(rank, out_dir, round_up):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = f"{out_dir}/work_{round_up}"
    cfg.launcher = "pytorch"
    cfg.strategy = dict(type="FSDP", sharding="zero3")
    cfg.log_level = "WARNING"
    cfg.merge_from_dict(
        {
            "val_dataloader.dataset.val_ratio": 0.0562,  # 101 samples: 51 and 50 per rank
            "val_dataloader.batch_size": 10,  # 6 and 5 batches
            "val_dataloader.sampler.round_up": round_up,
        }
    )
    runner = Runner.from_cfg(cfg)
    try:
        return runner.val()
    except ValueError as error:
        return str(error)


def evaluate_both(rank, out_dir):
    """Each rank: the refusal with round_up=False, then the metrics with round_up=True."""
    return evaluate(rank, out_dir, round_up=False), evaluate(rank, out_dir, round_up=True)


def test_uneven_batches_are_refused_for_a_sharded_model(tmp_path, spawn_ranks):
    (refused, metrics), (refused_1, metrics_1) = spawn_ranks(evaluate_both, tmp_path, 2, 240)
    expected = (
        "val_dataloader gives the ranks different numbers of batches (rank 0: 6, rank 1: 5): the "
        "model is sharded by FSDP, and every one of its forward passes needs all ranks; set "
        "val_dataloader.sampler.round_up=True (the samples it repeats to even out the ranks "
        "are left out of the metrics)"
    )
    assert refused == refused_1 == expected
    assert metrics == metrics_1 and 0 <= metrics["accuracy/top1"] <= 100
