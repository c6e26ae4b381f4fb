"""CheckpointHook's max_keep_best: the k best checkpoints of each save_best metric, in a real
Runner (a tiny classifier and a metric that reports the scores a test scripts), by epoch and by
iteration, across a resume, and which one ``tools/test.py CONFIG best`` takes."""

# ruff: noqa: F811

from __future__ import annotations

import os
import shutil

import pytest
import torch

from runnerx.checkpoint import load_checkpoint
from runnerx.fileio import register_backend
from runnerx.hooks import CheckpointHook, Hook
from runnerx.runner.cli import checkpoint_to_test

# The checkpoint tests' Runner factory (a tiny classifier, a scripted metric), imported as a
# fixture: the test functions' make_runner argument is it (hence the file-wide F811).
from tests.checkpoint.conftest import ScriptedMetric, make_runner  # noqa: F401
from tests.fileio.dir_store import DirStoreBackend

SCORES = [0.5, 0.7, 0.6, 0.9, 0.4]


def best_files(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.startswith("best_"))


def kept(runner, key: str = "best_ckpts") -> list[tuple[float, str]]:
    """The kept list the MessageHub records, with file names for paths."""
    listed = runner.message_hub.get_info(key)
    return [(score, os.path.basename(path)) for score, path in listed]


def train_keeping_best(make_runner, k: int, rule: str, scores=SCORES, **runner_kwargs):
    runner = make_runner(
        {"interval": 1, "save_best": "scripted/score", "max_keep_best": k, "rule": rule},
        max_epochs=len(scores),
        scores=scores,
        **runner_kwargs,
    )
    runner.train()
    return runner


def test_the_k_best_scores_keep_their_checkpoints(make_runner):
    runner = train_keeping_best(make_runner, 2, rule="greater")
    assert best_files(runner.work_dir) == [
        "best_scripted_score_epoch_2.pth",  # 0.7
        "best_scripted_score_epoch_4.pth",  # 0.9
    ]
    assert kept(runner) == [
        (0.9, "best_scripted_score_epoch_4.pth"),
        (0.7, "best_scripted_score_epoch_2.pth"),
    ]
    hub = runner.message_hub  # MMEngine's records still name the single best
    assert hub.get_info("best_score") == 0.9
    assert hub.get_info("best_ckpt") == os.path.join(
        runner.work_dir, "best_scripted_score_epoch_4.pth"
    )
    # epoch 3's 0.6 entered (pushing out 0.5): its periodic checkpoint was written again to
    # record the new list, so a resume from it knows which files are kept
    info = load_checkpoint(os.path.join(runner.work_dir, "epoch_3.pth"))["message_hub"]
    assert [os.path.basename(path) for _, path in info["runtime_info"]["best_ckpts"]] == [
        "best_scripted_score_epoch_2.pth",
        "best_scripted_score_epoch_3.pth",
    ]


def test_the_less_rule_keeps_the_smallest_scores(make_runner):
    runner = train_keeping_best(make_runner, 2, rule="less")
    assert best_files(runner.work_dir) == [
        "best_scripted_score_epoch_1.pth",  # 0.5
        "best_scripted_score_epoch_5.pth",  # 0.4
    ]
    assert runner.message_hub.get_info("best_score") == 0.4


def test_by_iteration_the_files_are_named_by_iteration(make_runner):
    runner = make_runner(
        {"by_epoch": False, "save_best": "scripted/score", "max_keep_best": 2, "rule": "greater"},
        scores=SCORES,
        train_cfg={"by_epoch": False, "max_iters": 10, "val_interval": 2},
    )
    runner.train()
    assert best_files(runner.work_dir) == [
        "best_scripted_score_iter_4.pth",  # 0.7
        "best_scripted_score_iter_8.pth",  # 0.9
    ]


def test_equal_scores_keep_the_earlier_checkpoint(make_runner):
    runner = train_keeping_best(make_runner, 2, scores=[0.7, 0.5, 0.5, 0.7], rule="greater")
    # epoch 3's 0.5 does not push out epoch 2's; epoch 4's 0.7 ranks after epoch 1's
    assert kept(runner) == [
        (0.7, "best_scripted_score_epoch_1.pth"),
        (0.7, "best_scripted_score_epoch_4.pth"),
    ]
    assert best_files(runner.work_dir) == [
        "best_scripted_score_epoch_1.pth",
        "best_scripted_score_epoch_4.pth",
    ]
    assert runner.message_hub.get_info("best_ckpt").endswith("best_scripted_score_epoch_1.pth")


def test_a_checkpoint_pushed_out_leaves_the_store_of_out_dir_too(
    make_runner, tmp_path, restore_backends, monkeypatch
):
    monkeypatch.setenv("STORE_ROOT", str(tmp_path / "store"))
    register_backend("dirstore", DirStoreBackend, prefixes="store")
    runner = make_runner(
        {
            "interval": 1,
            "max_keep_ckpts": 1,
            "save_best": "scripted/score",
            "rule": "greater",
            "max_keep_best": 2,
            "out_dir": "store://ckpts",
        },
        max_epochs=5,
        scores=SCORES,
    )
    runner.train()
    expected = ["best_scripted_score_epoch_2.pth", "best_scripted_score_epoch_4.pth"]
    assert best_files(runner.work_dir) == expected
    assert best_files(tmp_path / "store" / "ckpts" / "work") == expected


def test_several_metrics_keep_their_own_k_best(make_runner):
    runner = make_runner(
        {
            "interval": 1,
            "save_best": ["scripted/score", "scripted/loss"],
            "rule": ["greater", "less"],
            "max_keep_best": 2,
        },
        max_epochs=5,
        scores=SCORES,
        val_evaluator=[ScriptedMetric(SCORES), ScriptedMetric([0.3, 0.2, 0.4, 0.1, 0.5], "loss")],
    )
    runner.train()
    assert best_files(runner.work_dir) == [
        "best_scripted_loss_epoch_2.pth",  # 0.2
        "best_scripted_loss_epoch_4.pth",  # 0.1
        "best_scripted_score_epoch_2.pth",
        "best_scripted_score_epoch_4.pth",
    ]
    assert [name for _, name in kept(runner, "best_ckpts_scripted/loss")] == [
        "best_scripted_loss_epoch_4.pth",
        "best_scripted_loss_epoch_2.pth",
    ]
    assert runner.message_hub.get_info("best_score_scripted/score") == 0.9


class StopBeforeEpoch(Hook):
    """Stands for the job being killed once ``epoch`` epochs have finished (and validated)."""

    priority = "LOWEST"

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def before_train_epoch(self, runner) -> None:
        if runner.epoch == self.epoch:
            raise KeyboardInterrupt(f"stopped after epoch {self.epoch}")


def resumed_after_epoch_3(make_runner, tmp_path, first: dict, then: dict, scores=SCORES):
    """Train with CheckpointHook args ``first``, stop after epoch 3, resume with ``then``.
    Epoch 3's score changes the kept ones, so epoch_3.pth is written again after validating
    and the resumed run does not validate epoch 3 again."""
    work_dir = str(tmp_path / "resumed")
    checkpoint = {"interval": 1, "save_best": "scripted/score", "rule": "greater"}
    stopped = make_runner(
        {**checkpoint, **first},
        max_epochs=5,
        scores=scores[:3],
        work_dir=work_dir,
        custom_hooks=[StopBeforeEpoch(3)],
    )
    with pytest.raises(KeyboardInterrupt):
        stopped.train()
    runner = make_runner(
        {**checkpoint, **then}, max_epochs=5, scores=scores[3:], work_dir=work_dir, resume=True
    )
    runner.train()
    assert runner.val_evaluator.metrics[0].calls == 2  # epochs 4 and 5 only
    return runner


def test_a_resumed_run_ends_with_the_files_of_an_unbroken_one(make_runner, tmp_path):
    unbroken = train_keeping_best(
        make_runner, 2, rule="greater", work_dir=str(tmp_path / "unbroken")
    )
    resumed = resumed_after_epoch_3(
        make_runner, tmp_path, {"max_keep_best": 2}, {"max_keep_best": 2}
    )
    assert best_files(resumed.work_dir) == best_files(unbroken.work_dir)
    assert kept(resumed) == kept(unbroken)


def test_a_run_resumed_from_a_checkpoint_without_the_list_starts_from_the_best(
    make_runner, tmp_path
):
    # the first part keeps one best (as an older runnerx or MMEngine): no list is recorded
    scores = [0.5, 0.6, 0.7, 0.4, 0.3]
    resumed = resumed_after_epoch_3(make_runner, tmp_path, {}, {"max_keep_best": 2}, scores)
    assert kept(resumed) == [
        (0.7, "best_scripted_score_epoch_3.pth"),
        (0.4, "best_scripted_score_epoch_4.pth"),  # entered: only one was kept
    ]
    assert best_files(resumed.work_dir) == [
        "best_scripted_score_epoch_3.pth",
        "best_scripted_score_epoch_4.pth",
    ]


def test_resuming_with_a_smaller_k_removes_the_worst_beyond_it(make_runner, tmp_path):
    resumed = resumed_after_epoch_3(make_runner, tmp_path, {"max_keep_best": 3}, {})
    # after epoch 3 the run kept 0.7, 0.6, 0.5; k=1 keeps 0.7, then 0.9 replaces it
    assert best_files(resumed.work_dir) == ["best_scripted_score_epoch_4.pth"]
    assert resumed.message_hub.get_info("best_ckpts") is None  # k=1: MMEngine's records only


def test_k_1_is_the_single_best_checkpoint_with_mmengine_records(make_runner):
    runner = train_keeping_best(make_runner, 1, rule="greater")
    assert best_files(runner.work_dir) == ["best_scripted_score_epoch_4.pth"]
    info = runner.message_hub.runtime_info
    # and which metric and rule they are for (runnerx's)
    assert {key for key in info if key.startswith("best_")} == {
        "best_score",
        "best_ckpt",
        "best_for",
    }
    assert info["best_score"] == 0.9
    assert info["best_for"] == ("scripted/score", "greater")


@pytest.mark.parametrize("score", [0.9, 0.1])  # better and worse than the best, 0.7
def test_a_validation_after_training_writes_no_checkpoint(make_runner, score):
    runner = make_runner(
        {"interval": 1, "save_best": "scripted/score", "rule": "greater"},
        max_epochs=2,
        scores=[0.5, 0.7, score],
    )
    runner.train()
    work_dir = runner.work_dir

    def on_disk() -> dict[str, bytes]:
        with os.scandir(work_dir) as entries:
            return {e.name: open(e.path, "rb").read() for e in entries if e.is_file()}

    before = on_disk()
    assert "best_scripted_score_epoch_2.pth" in before and "epoch_2.pth" in before
    with torch.no_grad():
        runner.model.linear.weight.zero_()  # the model validated is not the one saved
    assert runner.val() == {"scripted/score": score}
    assert on_disk() == before  # as Lightning's validate(): the best and epoch_2.pth untouched
    assert runner.message_hub.get_info("best_score") == 0.7


def test_tools_test_best_takes_the_best_scoring_of_the_kept_ones(make_runner):
    # kept: 0.9 (epoch 3), 0.7 (epoch 4, the newest), 0.6 (epoch 1, the first by name)
    runner = train_keeping_best(make_runner, 3, scores=[0.6, 0.5, 0.9, 0.7], rule="greater")
    assert len(best_files(runner.work_dir)) == 3
    expected = os.path.join(runner.work_dir, "best_scripted_score_epoch_3.pth")
    assert checkpoint_to_test("best", runner.work_dir) == expected
    # also when the file times no longer tell the newest (a copy, say)
    for name in best_files(runner.work_dir):
        os.utime(os.path.join(runner.work_dir, name), (0, 0))
    assert checkpoint_to_test("best", runner.work_dir) == expected


def test_tools_test_best_takes_the_smallest_under_the_less_rule(make_runner):
    runner = train_keeping_best(make_runner, 3, scores=[0.6, 0.5, 0.9, 0.7], rule="less")
    expected = os.path.join(runner.work_dir, "best_scripted_score_epoch_2.pth")
    assert checkpoint_to_test("best", runner.work_dir) == expected


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_keep_best": 0}, ValueError, "max_keep_best must be an int >= 1 .*got 0"),
        ({"max_keep_best": -2}, ValueError, "max_keep_best must be an int >= 1 .*got -2"),
        ({"max_keep_best": True}, TypeError, "max_keep_best must be an int >= 1, got True"),
        ({"max_keep_best": 2.0}, TypeError, "max_keep_best must be an int >= 1, got 2.0"),
        ({"max_keep_best": "3"}, TypeError, "max_keep_best must be an int >= 1, got '3'"),
    ],
)
def test_bad_max_keep_best_is_named(kwargs, error, message):
    with pytest.raises(error, match=f"CheckpointHook: {message}"):
        CheckpointHook(save_best="acc", **kwargs)


def test_max_keep_best_without_save_best_is_an_error():
    with pytest.raises(ValueError, match="CheckpointHook: max_keep_best=3 .* save_best is not set"):
        CheckpointHook(interval=1, max_keep_best=3)
    CheckpointHook(interval=1, max_keep_best=1)  # the default: nothing to complain about


def log_text(runner) -> str:
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        return file.read()


def first_three_epochs(make_runner, work_dir: str):
    """A run keeping the 2 best of 0.5, 0.7, 0.6: best_..._epoch_2 and best_..._epoch_3."""
    first = make_runner(
        {"interval": 1, "save_best": "scripted/score", "rule": "greater", "max_keep_best": 2},
        max_epochs=3,
        scores=[0.5, 0.7, 0.6],
        work_dir=work_dir,
    )
    first.train()
    assert best_files(work_dir) == [
        "best_scripted_score_epoch_2.pth",
        "best_scripted_score_epoch_3.pth",
    ]
    return first


def test_a_copied_work_dir_prunes_its_own_best_files_and_leaves_the_original_alone(
    make_runner, tmp_path
):
    original, copy = str(tmp_path / "original"), str(tmp_path / "copy")
    first_three_epochs(make_runner, original)
    shutil.copytree(original, copy)
    resumed = make_runner(
        {"interval": 1, "save_best": "scripted/score", "rule": "greater", "max_keep_best": 2},
        max_epochs=5,
        scores=[0.9, 0.8],  # each pushes out one of the copied best files
        work_dir=copy,
        resume=True,
    )
    resumed.train()
    assert best_files(original) == [
        "best_scripted_score_epoch_2.pth",
        "best_scripted_score_epoch_3.pth",
    ]
    assert best_files(copy) == [
        "best_scripted_score_epoch_4.pth",
        "best_scripted_score_epoch_5.pth",
    ]
    listed = resumed.message_hub.get_info("best_ckpts")
    assert {os.path.dirname(path) for _, path in listed} == {copy}


def test_a_run_resumed_into_another_work_dir_removes_no_file_of_the_first(make_runner, tmp_path):
    original, other = str(tmp_path / "original"), str(tmp_path / "other")
    first_three_epochs(make_runner, original)
    resumed = make_runner(
        {"interval": 1, "save_best": "scripted/score", "rule": "greater"},  # k=1 from now on
        max_epochs=5,
        scores=[0.65, 0.9],
        work_dir=other,
        resume=os.path.join(original, "epoch_3.pth"),
    )
    resumed.train()
    assert best_files(original) == [
        "best_scripted_score_epoch_2.pth",
        "best_scripted_score_epoch_3.pth",
    ]
    # the first run's 0.7 still ranks: 0.65 is no new best, 0.9 is
    assert best_files(other) == ["best_scripted_score_epoch_5.pth"]
    assert (
        f"the best checkpoints the resumed run recorded lie in {original}, not in {other}; "
        "they are left alone"
    ) in log_text(resumed)
