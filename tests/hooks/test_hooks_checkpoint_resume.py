"""CheckpointHook on resume after its settings changed: a best record of another ``save_best``
metric or rule, a resume from an older checkpoint of the work dir, and kept periodic files
whose names changed (``by_epoch`` flipped) or that lie in another folder (``out_dir`` moved).
Small cases use the stand-in Runner (tests/hooks/conftest.py), end-to-end ones a real one."""

# ruff: noqa: F811

from __future__ import annotations

import os

import pytest

from runnerx.hooks import CheckpointHook

# The checkpoint tests' Runner factory, imported as a fixture (hence the file-wide F811).
from tests.checkpoint.conftest import ScriptedMetric, make_runner  # noqa: F401


def pth_files(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pth"))


def log_text(runner) -> str:
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        return file.read()


def touch(folder, name: str) -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    open(path, "w").close()
    return path


def resumed_with_best(runner, name: str, score: float, best_for=None) -> str:
    """The stand-in Runner as resumed after 2 epochs whose best record is ``name``'s file."""
    path = touch(runner.work_dir, name)
    runner.message_hub.update_info("best_score", score)
    runner.message_hub.update_info("best_ckpt", path)
    if best_for is not None:
        runner.message_hub.update_info("best_for", best_for)
    runner.epoch, runner.iter, runner.max_epochs = 2, 8, 4
    return path


# -- finding 4: save_best (or rule) changed on resume --------------------------------------


def test_a_changed_save_best_metric_starts_its_own_best_and_keeps_the_old_file(make_runner):
    """top5 -> top1: top1's scores are not measured against top5's 1.0, and top5's file stays."""
    first = make_runner(
        {"interval": 1, "save_best": "scripted/top5"},
        scores=[0.9, 1.0],
        val_evaluator=ScriptedMetric([0.9, 1.0], "top5"),
    )
    first.train()
    resumed = make_runner(
        {"interval": 1, "save_best": "scripted/top1"},
        max_epochs=4,
        scores=[0.8, 0.85],
        val_evaluator=ScriptedMetric([0.8, 0.85], "top1"),
        resume=True,
    )
    resumed.train()
    assert [name for name in pth_files(resumed.work_dir) if name.startswith("best_")] == [
        "best_scripted_top1_epoch_4.pth",
        "best_scripted_top5_epoch_2.pth",
    ]
    hub = resumed.message_hub
    assert (hub.get_info("best_score"), tuple(hub.get_info("best_for"))) == (
        0.85,
        ("scripted/top1", "greater"),
    )
    assert (
        "CheckpointHook: the resumed best checkpoint record is for scripted/top5 (greater), not "
        "scripted/top1 (greater): scripted/top1 starts its own best; the recorded files stay "
        "(best_scripted_top5_epoch_2.pth), no longer replaced by save_best"
    ) in log_text(resumed)


@pytest.mark.parametrize(
    ("old_file", "metric"),
    [
        ("best_accuracy_top1_epoch_2.pth", "accuracy/top5"),  # top1 -> top5
        ("best_acc_top5_epoch_2.pth", "acc"),  # 'acc' is not acc/top5, though a prefix of it
        ("best_ckpt_e2.pth", "acc"),  # a name that cannot be told: another metric's, to be safe
    ],
)
def test_an_old_record_of_another_metric_by_its_file_name_is_not_compared(
    runner, train, old_file, metric
):
    # an older runnerx's (or MMEngine's) record: no 'best_for', only the file name tells
    old = resumed_with_best(runner, old_file, score=100.0)
    hook = CheckpointHook(save_best=metric, rule="greater", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {metric: {3: 0.9, 4: 0.8}[epoch]})
    assert runner.save_checkpoint.filenames == [f"best_{metric.replace('/', '_')}_epoch_3.pth"]
    assert os.path.exists(old)  # never removed as "a better best"
    [warning] = runner.logger.messages("warning")
    assert "the resumed best checkpoint record does not say its metric" in warning
    assert f"the recorded files stay ({old_file})" in warning


def test_an_old_record_named_for_the_metric_is_compared_and_then_says_its_metric(runner, train):
    old = resumed_with_best(runner, "best_accuracy_top1_iter_7.pth", score=0.95)
    hook = CheckpointHook(save_best="accuracy/top1", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {"accuracy/top1": {3: 0.9, 4: 0.97}[epoch]})
    assert runner.save_checkpoint.filenames == ["best_accuracy_top1_epoch_4.pth"]
    assert not os.path.exists(old)
    assert runner.message_hub.get_info("best_for") == ("accuracy/top1", "greater")
    assert runner.logger.messages("warning") == []


def test_a_changed_rule_starts_a_new_best(runner, train):
    old = resumed_with_best(runner, "best_err_epoch_2.pth", 0.1, best_for=("err", "less"))
    hook = CheckpointHook(save_best="err", rule="greater", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {"err": {3: 0.05, 4: 0.2}[epoch]})
    assert runner.save_checkpoint.filenames == ["best_err_epoch_3.pth", "best_err_epoch_4.pth"]
    assert os.path.exists(old)
    assert "record is for err (less), not err (greater)" in runner.logger.messages("warning")[0]


def test_auto_settles_the_resumed_record_at_its_first_validation(runner, train):
    old = resumed_with_best(runner, "best_loss_epoch_2.pth", 0.01, best_for=("loss", "less"))
    hook = CheckpointHook(save_best="auto", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {"acc": 0.5, "loss": 0.3})
    assert runner.save_checkpoint.filenames == ["best_acc_epoch_3.pth"]
    assert os.path.exists(old)
    assert "record is for loss (less), not acc (greater)" in runner.logger.messages("warning")[0]


# -- finding 6: resuming from an older checkpoint of the work dir ---------------------------


def test_resuming_an_older_checkpoint_of_the_work_dir_says_what_is_replaced(make_runner):
    first = make_runner({"interval": 1}, max_epochs=3)
    first.train()
    work = first.work_dir
    resumed = make_runner({"interval": 1}, max_epochs=3, resume=os.path.join(work, "epoch_1.pth"))
    resumed.train()
    log = log_text(resumed)
    newest = os.path.join(work, "epoch_3.pth")
    assert "holds the checkpoints of an earlier run" not in log
    assert (
        f"resumed after 4 iterations, from a checkpoint older than the work dir's newest, "
        f"{newest}: the checkpoints saved after it are replaced as training reaches them, and "
        f"last_checkpoint names {newest} until this run saves one"
    ) in log


def test_a_new_run_or_one_resumed_from_elsewhere_still_warns_of_the_earlier_run(runner, tmp_path):
    newest = touch(runner.work_dir, "epoch_3.pth")
    with open(os.path.join(runner.work_dir, "last_checkpoint"), "w") as file:
        file.write(newest)
    for resumed in (None, touch(tmp_path / "other", "epoch_1.pth")):
        if resumed:
            runner.message_hub.update_info("last_ckpt", resumed)
        CheckpointHook(interval=1).before_train(runner)
        assert runner.logger.messages("warning")[-1].startswith(
            f"{runner.work_dir} holds the checkpoints of an earlier run (its last: {newest})"
        )
    assert len(runner.logger.messages("warning")) == 2


# -- finding 9: kept periodic checkpoints whose names or folder changed ----------------------


def test_by_epoch_flipped_on_resume_rotates_the_epoch_files_it_kept(make_runner):
    make_runner({"interval": 1, "max_keep_ckpts": 2}, max_epochs=2).train()
    resumed = make_runner(
        {"by_epoch": False, "interval": 4, "max_keep_ckpts": 2}, max_epochs=4, resume=True
    )
    resumed.train()
    assert pth_files(resumed.work_dir) == ["iter_12.pth", "iter_16.pth"]
    assert resumed.message_hub.get_info("keep_ckpt_ids") == [12, 16]  # MMEngine's record too


def test_records_of_steps_only_are_named_with_the_current_pattern(runner, train):
    # an older runnerx's or MMEngine's record (the paths here are stale: MMEngine saved since)
    epochs = [touch(runner.work_dir, f"epoch_{step}.pth") for step in (1, 2)]
    for step in (2, 4):
        touch(runner.work_dir, f"iter_{step}.pth")
    hub = runner.message_hub
    hub.update_info("keep_ckpt_ids", [2, 4])
    hub.update_info("keep_ckpt_files", [(1, epochs[0]), (2, epochs[1])])
    runner.epoch, runner.iter = 1, 4
    train(runner, [CheckpointHook(by_epoch=False, interval=4, max_keep_ckpts=2)])
    assert pth_files(runner.work_dir) == ["epoch_1.pth", "epoch_2.pth", "iter_12.pth", "iter_8.pth"]


def test_kept_files_outside_a_moved_out_dir_are_left_alone_and_logged(runner, train, tmp_path):
    old = [touch(runner.work_dir, f"epoch_{step}.pth") for step in (1, 2)]
    runner.message_hub.update_info("keep_ckpt_ids", [1, 2])
    runner.message_hub.update_info("keep_ckpt_files", [(1, old[0]), (2, old[1])])
    runner.epoch, runner.iter, runner.max_epochs = 2, 8, 5
    out_dir = tmp_path / "store"
    train(runner, [CheckpointHook(interval=1, max_keep_ckpts=2, out_dir=str(out_dir))])
    assert pth_files(runner.work_dir) == ["epoch_1.pth", "epoch_2.pth"]
    assert pth_files(out_dir / "exp") == ["epoch_4.pth", "epoch_5.pth"]
    [warning] = runner.logger.messages("warning")
    assert warning == (
        f"CheckpointHook: the periodic checkpoints the resumed run kept lie outside "
        f"{out_dir / 'exp'} ({old[0]}, {old[1]}): max_keep_ckpts leaves them alone"
    )


def test_a_copied_work_dir_rotates_its_own_copies_of_the_recorded_files(runner, train, tmp_path):
    original = tmp_path / "original"
    recorded = [touch(original, f"epoch_{step}.pth") for step in (1, 2)]
    for step in (1, 2):
        touch(runner.work_dir, f"epoch_{step}.pth")
    runner.message_hub.update_info("keep_ckpt_ids", [1, 2])
    runner.message_hub.update_info("keep_ckpt_files", [(1, recorded[0]), (2, recorded[1])])
    runner.epoch, runner.iter, runner.max_epochs = 2, 8, 3
    train(runner, [CheckpointHook(interval=1, max_keep_ckpts=2)])
    assert pth_files(runner.work_dir) == ["epoch_2.pth", "epoch_3.pth"]
    assert pth_files(original) == ["epoch_1.pth", "epoch_2.pth"]
    assert runner.message_hub.get_info("keep_ckpt_files") == [
        (2, os.path.join(runner.work_dir, "epoch_2.pth")),
        (3, os.path.join(runner.work_dir, "epoch_3.pth")),
    ]
