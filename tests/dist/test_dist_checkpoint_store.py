"""Checkpoints copied to a storage backend's ``out_dir`` by two real ranks (spawned
processes, gloo, CPU): only rank 0 writes to the store, once each checkpoint is complete."""

import os
from pathlib import Path

import torch

from runnerx import Config
from runnerx.fileio import register_backend
from runnerx.runner import Runner
from tests.fileio.dir_store import PREFIX, DirStoreBackend

ROOT = Path(__file__).parents[2]


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), STORE_ROOT=f"{out_dir}/store")
    torch.set_num_threads(1)
    register_backend("dirstore", DirStoreBackend, prefixes="store")
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = f"{out_dir}/work"
    cfg.launcher = "pytorch"
    cfg.merge_from_dict({"train_cfg.max_epochs": 2, "param_scheduler.1.end": 2})
    cfg.default_hooks.checkpoint = dict(
        type="CheckpointHook", interval=1, max_keep_ckpts=1, out_dir=f"{PREFIX}ckpts"
    )
    Runner.from_cfg(cfg).train()
    return DirStoreBackend.writes


def test_rank_zero_alone_copies_each_complete_checkpoint_to_the_store(tmp_path, spawn_ranks):
    writes = spawn_ranks(run_rank, tmp_path, 2, timeout=240)
    assert writes == [2, 0]  # epoch_1 and epoch_2, by rank 0 only
    local, stored = tmp_path / "work", tmp_path / "store" / "ckpts" / "work"
    assert sorted(path.name for path in stored.iterdir()) == ["epoch_2.pth"]  # max_keep_ckpts
    assert (stored / "epoch_2.pth").read_bytes() == (local / "epoch_2.pth").read_bytes()
    assert not (local / "epoch_1.pth").exists()
