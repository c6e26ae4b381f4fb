"""CheckpointHook with a real Runner: the files it writes, what they hold, best checkpoints,
publishing, and the clean-up of files an interrupted run left behind."""

from __future__ import annotations

import hashlib
import os
import re

import torch

from runnerx.checkpoint import load_checkpoint


def pth_files(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pth"))


def last_checkpoint(work_dir) -> str:
    with open(os.path.join(work_dir, "last_checkpoint")) as file:
        return file.read()


def test_epoch_checkpoints_hold_the_run_and_the_oldest_go_once_newer_are_complete(make_runner):
    runner = make_runner(
        {"interval": 1, "max_keep_ckpts": 2},
        max_epochs=3,
        param_scheduler=[{"type": "LinearLR", "start_factor": 0.5, "by_epoch": False, "end": 4}],
    )
    runner.train()
    work = runner.work_dir
    assert pth_files(work) == ["epoch_2.pth", "epoch_3.pth"]
    assert last_checkpoint(work) == os.path.join(work, "epoch_3.pth")
    checkpoint = load_checkpoint(os.path.join(work, "epoch_3.pth"))
    assert set(checkpoint) >= {"meta", "state_dict", "optimizer", "param_schedulers", "message_hub"}
    assert checkpoint["param_schedulers"][0]["_global_step"] == 12  # stepped every iteration
    assert (checkpoint["meta"]["epoch"], checkpoint["meta"]["iter"]) == (3, 12)
    assert checkpoint["message_hub"]["runtime_info"]["keep_ckpt_ids"] == [2, 3]
    weights = runner.unwrapped_model.state_dict()
    assert torch.equal(checkpoint["state_dict"]["linear.weight"], weights["linear.weight"])
    assert checkpoint["optimizer"]["state"]  # SGD momentum buffers


def test_iteration_checkpoints_without_optimizer(make_runner):
    runner = make_runner(
        {"interval": 3, "by_epoch": False, "save_optimizer": False}, by_epoch=False, max_epochs=2
    )
    runner.train()
    assert pth_files(runner.work_dir) == ["iter_3.pth", "iter_6.pth", "iter_8.pth"]
    checkpoint = load_checkpoint(os.path.join(runner.work_dir, "iter_6.pth"))
    assert checkpoint["meta"]["iter"] == 6
    assert "optimizer" not in checkpoint


def test_best_checkpoint_and_the_periodic_one_records_the_new_best(make_runner):
    # 'loss'-like metric: smaller is better, given as rule
    runner = make_runner(
        {"interval": 1, "save_best": "scripted/score", "rule": "less"},
        max_epochs=4,
        scores=[0.5, 0.3, 0.4, 0.2],
    )
    runner.train()
    work = runner.work_dir
    assert pth_files(work) == ["best_scripted_score_epoch_4.pth"] + [
        f"epoch_{n}.pth" for n in (1, 2, 3, 4)
    ]
    best = load_checkpoint(os.path.join(work, "best_scripted_score_epoch_4.pth"))
    assert "optimizer" not in best and "param_schedulers" not in best
    # epoch_2 was saved before its validation, then again after it found a new best
    info = load_checkpoint(os.path.join(work, "epoch_2.pth"))["message_hub"]["runtime_info"]
    assert info["best_score"] == 0.3
    assert info["best_ckpt"] == os.path.join(work, "best_scripted_score_epoch_2.pth")
    # epoch_3 found no new best: it still names epoch 2's best
    info = load_checkpoint(os.path.join(work, "epoch_3.pth"))["message_hub"]["runtime_info"]
    assert info["best_ckpt"] == os.path.join(work, "best_scripted_score_epoch_2.pth")
    assert last_checkpoint(work) == os.path.join(work, "epoch_4.pth")


def test_best_by_iteration_rewrites_no_checkpoint_when_none_was_saved(make_runner):
    runner = make_runner(
        {"by_epoch": False, "save_best": "scripted/score", "rule": "greater", "save_last": False},
        by_epoch=False,
        max_epochs=2,
        val_interval=4,
        scores=[0.1, 0.9],
    )
    runner.train()
    assert pth_files(runner.work_dir) == ["best_scripted_score_iter_8.pth"]
    assert not os.path.exists(os.path.join(runner.work_dir, "last_checkpoint"))


def test_published_keys_publish_the_last_and_the_best_checkpoint(make_runner):
    runner = make_runner(
        {
            "interval": 1,
            "save_best": "scripted/score",
            "rule": "greater",
            "published_keys": ["meta", "state_dict"],
        },
        max_epochs=2,
        scores=[0.7, 0.6],
    )
    runner.train()
    work = runner.work_dir
    published = [name for name in pth_files(work) if re.search(r"-[0-9a-f]{8}\.pth$", name)]
    assert [re.sub(r"-[0-9a-f]{8}", "", name) for name in published] == [
        "best_scripted_score_epoch_1.pth",
        "epoch_2.pth",
    ]
    for name in published:
        path = os.path.join(work, name)
        with open(path, "rb") as file:
            assert hashlib.sha256(file.read()).hexdigest()[:8] == name[-12:-4]
        checkpoint = load_checkpoint(path)
        assert set(checkpoint) == {"meta", "state_dict"}
        assert "cfg" in checkpoint["meta"]  # the hook keeps the entries it was asked for whole
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        assert "is published to" in file.read()


def test_files_of_an_interrupted_save_are_removed_when_training_starts(make_runner):
    runner = make_runner({"interval": 1}, max_epochs=1)
    work = runner.work_dir
    os.makedirs(work, exist_ok=True)
    leftovers = [
        ".epoch_7.pth.k2m_9x0a",
        ".best_acc_epoch_3.pth.abcdefgh",
        ".last_checkpoint.0a1b2c3d",
    ]
    unrelated = [".epoch_1.pth.notes", ".config.py.abcdefgh", "notes.pth.abcdefgh"]
    for name in leftovers + unrelated:
        with open(os.path.join(work, name), "w") as file:
            file.write("partial")
    runner.train()
    names = os.listdir(work)
    assert not set(leftovers) & set(names)
    assert set(unrelated) <= set(names)
