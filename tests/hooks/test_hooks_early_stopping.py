"""EarlyStoppingHook: patience, min_delta, rules, thresholds and missing metrics."""

import math

import pytest

from runnerx.hooks import EarlyStoppingHook


def feed(runner, hook, key, values):
    """Validate with each value in turn during a training; the number of validations until
    training stopped."""
    hook.before_train(runner)
    for count, value in enumerate(values, start=1):
        hook.after_val_epoch(runner, {key: value, "other": 0.0})
        if runner.train_loop.stop_training:
            return count
    return None


def test_training_stops_after_patience_validations_without_improvement(runner):
    hook = EarlyStoppingHook("accuracy/top1", patience=2, min_delta=0.1)
    # 0.55 and 0.58 are within min_delta of the best 0.5: no improvement twice
    assert feed(runner, hook, "accuracy/top1", [0.5, 0.55, 0.58, 0.9]) == 3
    assert (
        "accuracy/top1 did not improve by 0.1 or more in the last 2"
        in (runner.logger.messages("info")[-1])
    )


def test_an_improvement_resets_the_patience(runner):
    hook = EarlyStoppingHook("acc", patience=2, min_delta=0.1)
    assert feed(runner, hook, "acc", [0.5, 0.55, 0.7, 0.75, 0.9, 0.95, 0.96]) == 7
    assert hook.best_score == 0.9


def test_reaching_best_plus_min_delta_counts_as_improvement_as_in_mmengine(runner):
    hook = EarlyStoppingHook("acc", patience=1, min_delta=0.5)
    assert feed(runner, hook, "acc", [1.0, 1.5, 2.0]) is None


def test_loss_is_inferred_as_less_is_better(runner):
    hook = EarlyStoppingHook("val_loss", patience=1, min_delta=0.0)
    assert hook.rule == "less"
    assert feed(runner, hook, "val_loss", [1.0, 0.8, 0.9]) == 3


def test_an_explicit_rule_wins_over_the_name(runner):
    hook = EarlyStoppingHook("loss_scale", rule="greater", patience=1, min_delta=0.0)
    assert feed(runner, hook, "loss_scale", [1.0, 2.0, 1.5]) == 3


def test_the_stopping_threshold_stops_at_once(runner):
    hook = EarlyStoppingHook("acc", stopping_threshold=0.9)
    assert feed(runner, hook, "acc", [0.5, 0.95]) == 2
    assert "reached stopping_threshold=0.9" in runner.logger.messages("info")[-1]


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_metric_stops_when_check_finite(runner, value):
    assert feed(runner, EarlyStoppingHook("loss"), "loss", [1.0, value]) == 2
    runner.train_loop.stop_training = False
    assert feed(runner, EarlyStoppingHook("loss", check_finite=False), "loss", [value]) is None


def test_a_missing_metric_is_a_warning_naming_it_and_the_available_ones(runner):
    hook = EarlyStoppingHook("accuracy")
    hook.before_train(runner)
    hook.after_val_epoch(runner, {"acuracy": 0.5, "loss": 0.1})
    (warning,) = runner.logger.messages("warning")
    assert "'accuracy'" in warning and "'acuracy', 'loss'" in warning
    assert "Did you mean 'acuracy'?" in warning
    assert not runner.train_loop.stop_training


def test_a_missing_metric_is_an_error_when_strict(runner):
    hook = EarlyStoppingHook("acc", strict=True)
    hook.before_train(runner)
    with pytest.raises(RuntimeError, match="monitor 'acc' is not among") as caught:
        hook.after_val_epoch(runner, {"loss": 0.1})
    assert isinstance(caught.value, KeyError)  # as CheckpointHook's save_best: one type
    assert "Only the val_evaluator's metrics can be monitored" in str(caught.value)
    assert "a BaseMetric whose compute_metrics returns it" in str(caught.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"monitor": "fid"}, "cannot tell whether a larger or a smaller 'fid'"),
        ({"monitor": "acc", "rule": "max"}, "rule must be 'greater', 'less'"),
        ({"monitor": "acc", "patience": 0}, "patience must be an int >= 1"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EarlyStoppingHook(**kwargs)


@pytest.mark.parametrize(
    ("rule", "values", "stopped_at"),
    [("less", [1.0, 3.0, 3.5], 3), ("greater", [0.9, 0.5, 0.4], 3)],
)
def test_the_divergence_threshold_stops_at_once_when_the_metric_is_worse(
    runner, rule, values, stopped_at
):
    # Lightning's: 3.0 (or 0.5) equals the threshold, which is not worse yet
    threshold = 3.0 if rule == "less" else 0.5
    hook = EarlyStoppingHook("m", rule=rule, patience=10, divergence_threshold=threshold)
    assert feed(runner, hook, "m", values) == stopped_at
    assert (
        f"m = {values[-1]} is worse than divergence_threshold={threshold}; the best value was"
        in runner.logger.messages("info")[-1]
    )


@pytest.mark.parametrize(
    ("argument", "named"),
    [
        ({"mode": "min"}, "mode -> rule ('min' is rule='less'"),
        ({"save_top_k": 2}, "save_top_k -> CheckpointHook's max_keep_best"),
    ],
)
def test_lightnings_argument_names_are_refused_naming_runnerxs(argument, named):
    with pytest.raises(TypeError, match="EarlyStoppingHook got arguments of Lightning's") as error:
        EarlyStoppingHook(monitor="val/loss", **argument)  # monitor: MMEngine's name too
    assert named in str(error.value)


def test_another_unknown_argument_is_refused_with_the_closest_name():
    with pytest.raises(TypeError, match=r"\['patiance'\] \('patiance'; did you mean 'patience'"):
        EarlyStoppingHook(monitor="acc", patiance=3)


def saved_state(runner, values, **kwargs):
    """The checkpoint a hook fed ``values`` of 'acc' saves."""
    hook = EarlyStoppingHook("acc", patience=3, min_delta=0.1, **kwargs)
    feed(runner, hook, "acc", values)
    checkpoint = {"meta": {}}
    hook.before_save_checkpoint(runner, checkpoint)
    return checkpoint


def test_the_state_is_saved_and_taken_back_on_resume_only(runner):
    checkpoint = saved_state(runner, [0.5, 0.55, 0.58])
    assert checkpoint["early_stopping"]["acc"] == {
        "rule": "greater",
        "wait_count": 2,
        "best_score": 0.5,
        "stopped": None,
    }
    fresh = EarlyStoppingHook("acc", patience=3, min_delta=0.1)
    fresh.after_load_checkpoint(runner, checkpoint)  # load_from: a new run
    assert (fresh.wait_count, fresh.best_score) == (0, -math.inf)
    runner._resume = True
    resumed = EarlyStoppingHook("acc", patience=3, min_delta=0.1)
    resumed.after_load_checkpoint(runner, checkpoint)
    assert (resumed.wait_count, resumed.best_score) == (2, 0.5)
    assert feed(runner, resumed, "acc", [0.59]) == 1  # the third without improvement
    assert not runner.logger.messages("warning")  # the run had not stopped


def test_a_checkpoint_of_a_stopped_run_says_where_it_stopped_and_why(runner):
    runner.epoch, runner.iter = 2, 46
    checkpoint = saved_state(runner, [0.5, 0.55, 0.58, 0.59])
    stopped = checkpoint["early_stopping"]["acc"]["stopped"]
    assert (stopped["epoch"], stopped["iter"]) == (2, 46)
    runner._resume = True
    hook = EarlyStoppingHook("acc", patience=3)
    hook.after_load_checkpoint(runner, checkpoint)
    (warning,) = runner.logger.messages("warning")
    assert warning.startswith(
        "EarlyStoppingHook: the run resumed from was stopped early after iteration 46 (epoch 2): "
        "acc did not improve by 0.1 or more in the last 3 validations"
    )
    runner.train_loop.stop_training = False
    hook.before_train(runner)
    assert runner.train_loop.stop_training  # its patience is used up: it stops again
    raised = EarlyStoppingHook("acc", patience=4)
    raised.after_load_checkpoint(runner, checkpoint)
    runner.train_loop.stop_training = False
    raised.before_train(runner)
    assert not runner.train_loop.stop_training


def test_a_checkpoint_compared_by_another_rule_leaves_the_state_fresh(runner):
    checkpoint = saved_state(runner, [0.5, 0.55])
    runner._resume = True
    hook = EarlyStoppingHook("acc", rule="less")
    hook.after_load_checkpoint(runner, checkpoint)
    assert (hook.wait_count, hook.best_score) == (0, math.inf)
    (warning,) = runner.logger.messages("warning")
    assert "rule 'greater', this run with 'less'; patience starts afresh" in warning


def test_a_runner_that_does_not_train_validates_with_the_hook(tmp_path):
    # no train_cfg: nothing to stop (MMEngine sets stop_training on a None train loop)
    from torch.utils.data import DataLoader

    from runnerx.runner import Runner
    from tests.runner.test_runner_built_objects import Acc, ToyData, ToyModel

    runner = Runner(
        model=ToyModel(),
        work_dir=str(tmp_path),
        val_dataloader=DataLoader(ToyData(8), batch_size=4),
        val_cfg=dict(),
        val_evaluator=Acc(),
        custom_hooks=[EarlyStoppingHook("acc", stopping_threshold=0.0)],
    )
    assert runner.train_loop is None
    assert "acc" in runner.val()


def test_a_validation_after_training_leaves_the_patience_alone(tmp_path):
    # as CheckpointHook's save_best and Lightning's validate(): only a training's validations count
    from runnerx.runner import Runner
    from tests.runner.test_runner_built_objects import arguments

    hook = EarlyStoppingHook("acc", patience=2, min_delta=1.0)  # no validation improves by 1
    args = arguments(tmp_path, val=True, custom_hooks=[hook])
    runner = Runner(**{**args, "train_cfg": dict(by_epoch=True, max_epochs=2)})
    runner.train()
    assert (hook.wait_count, runner.train_loop.stop_training) == (1, False)
    runner.val()
    assert (hook.wait_count, runner.train_loop.stop_training) == (1, False)
