"""CheckpointHook: when it saves, under which names, what it keeps, and the best checkpoint."""

import os

import pytest

from runnerx.hooks import CheckpointHook


def files(folder):
    return sorted(name for name in os.listdir(folder) if name.endswith(".pth"))


def last_checkpoint(runner):
    with open(os.path.join(runner.work_dir, "last_checkpoint")) as file:
        return file.read()


def test_by_epoch_saves_every_interval_and_the_last_epoch(runner, train):
    runner.max_epochs = 5
    train(runner, [CheckpointHook(interval=2)])
    saver = runner.save_checkpoint
    assert saver.filenames == ["epoch_2.pth", "epoch_4.pth", "epoch_5.pth"]
    assert saver.calls[0]["out_dir"] == runner.work_dir
    assert saver.calls[0]["meta"] == {"epoch": 2, "iter": 8}
    assert saver.calls[0]["save_optimizer"] and saver.calls[0]["save_param_scheduler"]
    assert runner.message_hub.get_info("last_ckpt") == os.path.join(runner.work_dir, "epoch_5.pth")


def test_by_iteration_saves_every_interval_and_the_last_iteration(runner, train):
    runner.train_dataloader = list(range(7))
    hook = CheckpointHook(interval=3, by_epoch=False, save_optimizer=False)
    train(runner, [hook], epochs=1)
    saver = runner.save_checkpoint
    assert saver.filenames == ["iter_3.pth", "iter_6.pth", "iter_7.pth"]
    assert saver.calls[0]["meta"] == {"epoch": 0, "iter": 3}
    assert not saver.calls[0]["save_optimizer"]


def test_by_epoch_it_is_not_called_per_iteration():
    assert "after_train_iter" not in CheckpointHook(interval=1).overridden_points()
    assert "after_train_epoch" not in CheckpointHook(by_epoch=False).overridden_points()
    assert "after_val_epoch" not in CheckpointHook().overridden_points()
    assert "after_val_epoch" in CheckpointHook(save_best="auto").overridden_points()
    assert "before_run" not in CheckpointHook().overridden_points()


def test_save_last_false_and_no_interval_saves_nothing(runner, train):
    train(runner, [CheckpointHook(save_last=False)])
    assert runner.save_checkpoint.calls == []


def test_filename_tmpl_names_the_files(runner, train):
    runner.max_epochs = 2
    train(runner, [CheckpointHook(interval=1, filename_tmpl="model_{:03d}.pth")])
    assert runner.save_checkpoint.filenames == ["model_001.pth", "model_002.pth"]


def test_last_checkpoint_names_the_newest_file_once_it_is_written(runner, train):
    train(runner, [CheckpointHook(interval=1)])
    calls = runner.save_checkpoint.calls
    assert calls[0]["last_checkpoint_before"] is None
    assert calls[1]["last_checkpoint_before"] == os.path.join(runner.work_dir, "epoch_1.pth")
    assert last_checkpoint(runner) == os.path.join(runner.work_dir, "epoch_3.pth")


def test_max_keep_ckpts_removes_the_oldest_after_the_newer_one_is_complete(runner, train):
    runner.max_epochs = 5
    train(runner, [CheckpointHook(interval=1, max_keep_ckpts=2)])
    assert files(runner.work_dir) == ["epoch_4.pth", "epoch_5.pth"]
    # while epoch 3 was being written, epochs 1 and 2 were both still there
    assert runner.save_checkpoint.calls[2]["files_before"] == ["epoch_1.pth", "epoch_2.pth"]
    assert runner.message_hub.get_info("keep_ckpt_ids") == [4, 5]


def test_a_resumed_run_keeps_counting_the_kept_checkpoints(runner, train):
    for step in (1, 2, 3):
        open(os.path.join(runner.work_dir, f"epoch_{step}.pth"), "w").close()
    runner.message_hub.update_info("keep_ckpt_ids", [1, 2, 3])
    runner.epoch, runner.iter, runner.max_epochs = 3, 12, 4
    train(runner, [CheckpointHook(interval=1, max_keep_ckpts=2)])
    assert files(runner.work_dir) == ["epoch_3.pth", "epoch_4.pth"]


def test_out_dir_gets_a_folder_named_after_the_work_dir(runner, train, tmp_path):
    train(runner, [CheckpointHook(interval=3, out_dir=str(tmp_path / "store"))])
    out_dir = str(tmp_path / "store" / "exp")
    assert runner.save_checkpoint.calls[0]["out_dir"] == out_dir
    assert files(out_dir) == ["epoch_3.pth"]
    assert last_checkpoint(runner) == os.path.join(out_dir, "epoch_3.pth")


def test_save_begin_is_the_first_epoch_saved(runner, train):
    runner.max_epochs = 6
    train(runner, [CheckpointHook(interval=2, save_begin=3, save_last=False)])
    assert runner.save_checkpoint.filenames == ["epoch_3.pth", "epoch_5.pth"]


def scores(*values):
    return lambda epoch: {"accuracy/top1": values[epoch - 1], "loss": 1.0 / epoch}


def test_the_best_checkpoint_follows_the_best_score(runner, train):
    runner.max_epochs = 4
    hook = CheckpointHook(save_best="accuracy/top1", save_last=False)
    train(runner, [hook], metrics=scores(50.0, 70.0, 60.0, 80.0))
    saver = runner.save_checkpoint
    assert saver.filenames == [
        "best_accuracy_top1_epoch_1.pth",
        "best_accuracy_top1_epoch_2.pth",
        "best_accuracy_top1_epoch_4.pth",
    ]
    assert not saver.calls[0]["save_optimizer"] and not saver.calls[0]["save_param_scheduler"]
    # the previous best stays until the new one is written
    assert saver.calls[1]["files_before"] == ["best_accuracy_top1_epoch_1.pth"]
    assert files(runner.work_dir) == ["best_accuracy_top1_epoch_4.pth"]
    hub = runner.message_hub
    assert hub.get_info("best_score") == 80.0
    assert hub.get_info("best_ckpt") == os.path.join(
        runner.work_dir, "best_accuracy_top1_epoch_4.pth"
    )


def test_auto_uses_the_first_metric_and_loss_is_less_is_better(runner, train):
    runner.max_epochs = 2
    hook = CheckpointHook(save_best="auto", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {"loss": [0.5, 0.7][epoch - 1], "acc": 1.0})
    assert runner.save_checkpoint.filenames == ["best_loss_epoch_1.pth"]
    assert hook.rules == {"loss": "less"}


def test_several_best_metrics_are_tracked_separately(runner, train):
    runner.max_epochs = 2
    hook = CheckpointHook(save_best=["accuracy/top1", "loss"], rule=["greater", "less"])
    train(runner, [hook], metrics=scores(90.0, 80.0), epochs=2)
    best = [name for name in runner.save_checkpoint.filenames if name.startswith("best")]
    assert best == [
        "best_accuracy_top1_epoch_1.pth",
        "best_loss_epoch_1.pth",
        "best_loss_epoch_2.pth",  # loss is 1 / epoch: it keeps improving
    ]
    assert runner.message_hub.get_info("best_score_loss") == 0.5
    assert runner.message_hub.get_info("best_score_accuracy/top1") == 90.0


def test_a_resumed_run_compares_with_the_recorded_best(runner, train):
    old_best = os.path.join(runner.work_dir, "best_acc_epoch_1.pth")
    open(old_best, "w").close()
    runner.message_hub.update_info("best_score", 0.9)
    runner.message_hub.update_info("best_ckpt", old_best)
    runner.epoch, runner.iter, runner.max_epochs = 1, 4, 3
    hook = CheckpointHook(save_best="acc", save_last=False)
    train(runner, [hook], metrics=lambda epoch: {"acc": {2: 0.95, 3: 0.92}[epoch]})
    assert runner.save_checkpoint.filenames == ["best_acc_epoch_2.pth"]  # only 0.95 beats 0.9
    assert not os.path.exists(old_best)


def test_a_new_best_rewrites_the_periodic_checkpoint_of_its_step_only(runner, train):
    runner.max_epochs = 2
    hook = CheckpointHook(interval=1, save_best="acc")
    train(runner, [hook], metrics=lambda epoch: {"acc": epoch})
    assert runner.save_checkpoint.filenames == [
        "epoch_1.pth",
        "best_acc_epoch_1.pth",
        "epoch_1.pth",  # again, now recording the new best
        "epoch_2.pth",
        "best_acc_epoch_2.pth",
        "epoch_2.pth",
    ]


def test_a_new_best_at_a_step_the_interval_skipped_writes_no_extra_checkpoint(runner, train):
    runner.max_epochs = 2  # 4 iterations an epoch, validated after each epoch
    hook = CheckpointHook(by_epoch=False, interval=3, save_best="acc")
    train(runner, [hook], metrics=lambda epoch: {"acc": epoch})
    assert runner.save_checkpoint.filenames == [
        "iter_3.pth",
        "best_acc_iter_4.pth",  # MMEngine would also write an iter_4.pth here
        "iter_6.pth",
        "iter_8.pth",  # the last iteration, saved before its validation
        "best_acc_iter_8.pth",
        "iter_8.pth",  # and again with the new best
    ]


def test_iteration_based_best_checkpoints_are_named_by_iteration(runner):
    hook = CheckpointHook(by_epoch=False, save_best="acc")
    hook.before_train(runner)
    runner.iter = 400
    hook.after_val_epoch(runner, {"acc": 0.5})
    assert runner.save_checkpoint.filenames == ["best_acc_iter_400.pth"]


def test_a_missing_best_metric_is_named_with_a_close_match(runner):
    hook = CheckpointHook(save_best="accuracy")
    hook.before_train(runner)
    with pytest.raises(KeyError, match=r"'accuracy'.*Did you mean 'acuracy'"):
        hook.after_val_epoch(runner, {"acuracy": 0.5})


def test_a_logged_value_as_save_best_says_only_metrics_can_be_monitored(runner):
    hook = CheckpointHook(save_best="val_loss")
    hook.before_train(runner)
    # the same type as EarlyStoppingHook(strict=True) raises: MMEngine's KeyError and its
    # early stopping's RuntimeError both catch it
    with pytest.raises(RuntimeError) as caught:
        hook.after_val_epoch(runner, {"accuracy/top1": 50.0})
    assert isinstance(caught.value, KeyError)
    message = str(caught.value)
    assert message.startswith("CheckpointHook: save_best metric 'val_loss' is not among")
    assert "(available: 'accuracy/top1')" in message
    assert "Only the val_evaluator's metrics can be monitored" in message
    assert "BaseMetric whose compute_metrics returns it" in message


@pytest.mark.parametrize("max_keep_best", [1, 2])
def test_a_validation_at_the_same_step_again_replaces_its_best_only_when_better(
    runner, max_keep_best
):
    hook = CheckpointHook(save_best="acc", max_keep_best=max_keep_best)
    hook.before_train(runner)
    for runner.epoch, acc in ((1, 0.5), (2, 0.7), (2, 0.6)):  # epoch 2 validated twice
        hook.after_val_epoch(runner, {"acc": acc})
    saved = ["best_acc_epoch_1.pth", "best_acc_epoch_2.pth"]
    assert runner.save_checkpoint.filenames == saved  # 0.6 is worse than epoch 2's own 0.7
    assert runner.message_hub.get_info("best_score") == 0.7
    hook.after_val_epoch(runner, {"acc": 0.8})
    assert runner.save_checkpoint.filenames == [*saved, "best_acc_epoch_2.pth"]
    assert runner.message_hub.get_info("best_score") == 0.8


def test_a_validation_after_training_saves_nothing_even_with_a_better_score(runner, train):
    runner.max_epochs = 2
    hook = CheckpointHook(interval=1, save_best="acc")
    train(runner, [hook], metrics=lambda epoch: {"acc": epoch})
    saved = list(runner.save_checkpoint.filenames)
    hook.before_run(runner)  # runner.val()
    hook.after_val_epoch(runner, {"acc": 10.0})
    assert runner.save_checkpoint.filenames == saved
    assert runner.message_hub.get_info("best_score") == 2


def test_a_validation_after_a_failed_training_saves_nothing(runner):
    hook = CheckpointHook(save_best="acc")
    hook.before_run(runner)
    hook.before_train(runner)  # training raised before after_train
    hook.before_run(runner)  # then runner.val()
    hook.after_val_epoch(runner, {"acc": 0.5})
    assert runner.save_checkpoint.calls == []


def test_no_best_checkpoint_outside_training_or_without_metrics(runner):
    hook = CheckpointHook(save_best="acc")
    hook.after_val_epoch(runner, {"acc": 0.5})  # a standalone validation
    hook.before_train(runner)
    hook.after_val_epoch(runner, {})
    assert runner.save_checkpoint.calls == []
    assert "no metrics" in runner.logger.messages("warning")[0]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"save_best": "acc", "rule": "bigger"}, ValueError, "rule must be 'greater', 'less'"),
        ({"save_best": "fid"}, ValueError, "cannot tell whether a larger or a smaller 'fid'"),
        ({"save_best": ["auto", "acc"]}, ValueError, "'auto' cannot be combined"),
        ({"save_best": ["acc", "acc"]}, ValueError, "save_best has duplicates"),
        ({"save_best": ["a", "b"], "rule": ["less"] * 3}, ValueError, "one per save_best key"),
        ({"save_best": 3}, TypeError, "save_best must be a str"),
        ({"interval": "2"}, TypeError, "interval must be an int"),
        ({"save_begin": -1}, ValueError, "save_begin must be an int >= 0"),
        ({"filename_tmpl": "ckpt_{epoch}.pth"}, ValueError, "filename_tmpl must have one"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        CheckpointHook(**kwargs)


def test_greater_keys_teach_the_rule_inference():
    assert CheckpointHook(save_best="fid", less_keys=["fid"]).rules == {"fid": "less"}
    assert CheckpointHook(save_best="PSNR", greater_keys="psnr").rules == {"PSNR": "greater"}


@pytest.mark.parametrize("keys", ["greater_keys", "less_keys"])
def test_an_empty_keys_list_means_no_keys_not_the_defaults(keys):
    # as in MMEngine: 'acc' is a default greater key, 'loss' a default less one
    metric = "acc" if keys == "greater_keys" else "loss"
    with pytest.raises(ValueError, match=f"cannot tell whether a larger or a smaller '{metric}'"):
        CheckpointHook(save_best=metric, **{keys: []})
    assert CheckpointHook(save_best=metric, rule="less", **{keys: []}).rules == {metric: "less"}


def test_max_keep_ckpts_zero_warns_that_it_keeps_every_checkpoint(monkeypatch, caplog):
    import logging

    from runnerx.logging import logger as logger_module

    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("ckpt_hook_test"))
    CheckpointHook(interval=1, max_keep_ckpts=-1)
    assert not caplog.records
    CheckpointHook(interval=1, max_keep_ckpts=0)
    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert "max_keep_ckpts=0 keeps every checkpoint (as -1 does" in record.getMessage()
    assert "set default_hooks.checkpoint=None" in record.getMessage()


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ({"monitor": "val/loss"}, "monitor -> save_best='<metric name>'"),
        ({"save_top_k": 3}, "save_top_k -> max_keep_best=k with save_best"),
        ({"every_n_train_steps": 100}, "every_n_train_steps -> interval=N with by_epoch=False"),
    ],
)
def test_lightnings_modelcheckpoint_arguments_are_refused_naming_runnerxs(argument, named):
    with pytest.raises(TypeError, match="CheckpointHook got arguments of Lightning's") as error:
        CheckpointHook(**argument)
    assert named in str(error.value)


def test_another_unknown_argument_is_refused_with_the_closest_name():
    with pytest.raises(TypeError, match=r"\['max_keep_ckpt'\] \('max_keep_ckpt'; did you mean"):
        CheckpointHook(max_keep_ckpt=2)
