"""ReduceOnPlateau schedulers: the same metrics give the same values as MMEngine's, a resumed
schedule continues exactly, bad arguments are named, and a real Runner lowers the learning rate
once the validation metric stops improving."""

import copy
import io
from pathlib import Path

import pytest
import torch

from runnerx import HOOKS, Config
from runnerx.hooks import Hook
from runnerx.optim.scheduler import (
    ReduceOnPlateauLR,
    ReduceOnPlateauMomentum,
    ReduceOnPlateauParamScheduler,
    build_param_schedulers,
)
from runnerx.registry import PARAM_SCHEDULERS

ROOT = Path(__file__).parents[3]

# A validation loss with improvements, plateaus and changes below the default threshold.
LOSSES = [1.0, 0.8, 0.8, 0.79995, 0.81, 0.7, 0.7, 0.7, 0.7, 0.69, 0.69, 0.5, 0.52, 0.5, 0.5]
LOSSES += [0.5, 0.49999, 0.5, 0.5, 0.45, 0.45, 0.45, 0.45, 0.45]
ACCURACIES = [100 * (1 - loss) for loss in LOSSES]

CASES = {
    "less-rel-default": dict(monitor="loss", patience=2),
    "less-rel": dict(monitor="loss", threshold=0.05, patience=1, factor=0.5),
    "less-abs": dict(monitor="loss", threshold=0.02, threshold_rule="abs", patience=1, factor=0.5),
    "greater-rel": dict(monitor="acc", rule="greater", threshold=0.01, patience=1, factor=0.5),
    "greater-abs": dict(
        monitor="acc", rule="greater", threshold=1.0, threshold_rule="abs", patience=2
    ),
    "cooldown": dict(monitor="loss", patience=0, cooldown=2, factor=0.5),
    "min-value": dict(monitor="loss", patience=0, factor=0.3, min_value=[0.02, 0.004]),
    "eps": dict(monitor="loss", patience=0, factor=0.5, eps=0.02),
    "begin-end": dict(monitor="loss", patience=0, factor=0.5, begin=4, end=15),
    "val-every-2-epochs": dict(monitor="loss", patience=0, factor=0.5, val_interval=2),
}


def _metrics(epoch: int) -> dict:
    return {"loss": LOSSES[epoch], "acc": ACCURACIES[epoch]}


def _run_like_the_runner(optimizer, scheduler, key, epochs, val_interval=1, first_epoch=0):
    """Step as the ParamSchedulerHook does in an epoch-based run: ``step()`` after every
    training epoch, ``step(metrics)`` after every validation; the value after each epoch."""
    curve = []
    for epoch in range(first_epoch, epochs):
        scheduler.step()
        if (epoch + 1) % val_interval == 0:
            scheduler.step(_metrics(epoch))
        curve.append([group[key] for group in optimizer.param_groups])
        if key == "momentum" and "betas" in optimizer.param_groups[0]:
            curve[-1] += [group["betas"][0] for group in optimizer.param_groups]
    return curve


def _variants():
    for name, case in CASES.items():
        yield pytest.param("ReduceOnPlateauLR", "sgd", "lr", case, id=f"LR-{name}")
    case = CASES["cooldown"]
    yield pytest.param("ReduceOnPlateauMomentum", "sgd", "momentum", case, id="Momentum-sgd")
    yield pytest.param("ReduceOnPlateauMomentum", "adam", "momentum", case, id="Momentum-adam")
    generic = dict(case, param_name="weight_decay")
    yield pytest.param("ReduceOnPlateauParamScheduler", "sgd", "weight_decay", generic, id="wd")


def _both(name, kind, cfg, make_optimizer):
    """The scheduler built here and MMEngine's, each on its own identical optimizer."""
    mmengine_registry = pytest.importorskip("mmengine.registry")
    pytest.importorskip("mmengine.optim")
    cfg = dict(cfg, type=name)
    cfg.pop("val_interval", None)
    mine, theirs = make_optimizer(kind), make_optimizer(kind)
    (ours,) = build_param_schedulers(copy.deepcopy(cfg), mine)
    reference = mmengine_registry.PARAM_SCHEDULERS.build(cfg, default_args=dict(optimizer=theirs))
    return (mine, ours), (theirs, reference)


@pytest.mark.parametrize(("name", "kind", "key", "cfg"), list(_variants()))
def test_the_same_metrics_give_mmengines_values(name, kind, key, cfg, make_optimizer):
    val_interval = cfg.get("val_interval", 1)
    (mine, ours), (theirs, reference) = _both(name, kind, cfg, make_optimizer)
    curve = _run_like_the_runner(mine, ours, key, len(LOSSES), val_interval)
    assert curve == _run_like_the_runner(theirs, reference, key, len(LOSSES), val_interval)
    assert len({tuple(row) for row in curve}) > 2, "the case should reduce the value twice or more"
    assert ours.get_last_value() == reference.get_last_value()


def test_only_the_monitored_key_changes_and_adam_keeps_beta2(make_optimizer, values):
    optimizer = make_optimizer("adam")
    scheduler = ReduceOnPlateauMomentum(optimizer, patience=0, factor=0.5)
    scheduler.step({"loss": 1.0})
    scheduler.step({"loss": 1.0})
    assert values(optimizer, "betas0") == values(optimizer, "momentum") == [0.45, 0.45]
    assert [group["betas"][1] for group in optimizer.param_groups] == [0.99, 0.99]
    assert values(optimizer, "lr") == [0.1, 0.05]


def test_verbose_says_the_value_and_the_epoch_through_the_current_logger(
    make_optimizer, current_lines
):
    scheduler = ReduceOnPlateauLR(make_optimizer(), patience=0, factor=0.5, verbose=True)
    for _ in range(2):
        scheduler.step()  # the epoch ends
        scheduler.step({"loss": 1.0})
    assert current_lines == [  # MMEngine's lines
        "Adjusting parameter value of group 0 to 5.0000e-02 in epoch 1.",
        "Adjusting parameter value of group 1 to 2.5000e-02 in epoch 1.",
    ]


def _save_and_load(state: dict) -> dict:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


@pytest.mark.parametrize(
    ("stop", "carried"), [(3, "num_bad_epochs"), (14, "cooldown_counter"), (16, "best")]
)
def test_a_resumed_schedule_continues_exactly(stop, carried, make_optimizer):
    cfg = dict(type="ReduceOnPlateauLR", patience=1, cooldown=2, factor=0.5, min_value=0.01)
    straight = make_optimizer()
    (scheduler,) = build_param_schedulers(cfg, straight)
    expected = _run_like_the_runner(straight, scheduler, "lr", len(LOSSES))

    first = make_optimizer()
    (interrupted,) = build_param_schedulers(cfg, first)
    _run_like_the_runner(first, interrupted, "lr", stop)
    saved = _save_and_load(dict(optim=first.state_dict(), sched=interrupted.state_dict()))

    second = make_optimizer()
    (resumed,) = build_param_schedulers(cfg, second)
    second.load_state_dict(saved["optim"])
    resumed.load_state_dict(saved["sched"])
    rest = _run_like_the_runner(second, resumed, "lr", len(LOSSES), first_epoch=stop)
    assert rest == expected[stop:]

    fresh = make_optimizer()  # without the scheduler's state the rest would differ
    (forgetful,) = build_param_schedulers(cfg, fresh)
    assert forgetful.state_dict()[carried] != saved["sched"][carried]
    fresh.load_state_dict(saved["optim"])
    assert _run_like_the_runner(fresh, forgetful, "lr", len(LOSSES), first_epoch=stop) != rest


def test_an_mmengine_state_continues_here(make_optimizer):
    cfg = dict(monitor="acc", rule="greater", patience=1, cooldown=1, factor=0.5)
    (mine, ours), (theirs, reference) = _both("ReduceOnPlateauLR", "sgd", cfg, make_optimizer)
    _run_like_the_runner(theirs, reference, "lr", 9)
    mine.load_state_dict(theirs.state_dict())
    ours.load_state_dict(reference.state_dict())
    assert _run_like_the_runner(mine, ours, "lr", len(LOSSES), first_epoch=9) == (
        _run_like_the_runner(theirs, reference, "lr", len(LOSSES), first_epoch=9)
    )


def test_a_missing_monitor_names_it_and_the_metrics(make_optimizer):
    scheduler = ReduceOnPlateauLR(make_optimizer(), monitor="accuracy")
    scheduler.step()
    with pytest.raises(KeyError) as err:
        scheduler.step({"accuracy/top1": 90.0, "loss": 0.3})
    message = str(err.value)
    for part in (
        "param_scheduler",
        "monitor='accuracy'",
        "'accuracy/top1', 'loss'",
        "did you mean",
    ):
        assert part in message
    outside = ReduceOnPlateauLR(make_optimizer(), monitor="accuracy", begin=3)
    outside.step({"loss": 0.3})  # before begin the metrics are not read, as in MMEngine


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(rule="max"), "rule must be 'less' or 'greater', but got 'max'"),
        (dict(threshold_rule="relative"), "threshold_rule must be 'rel' or 'abs'"),
        (dict(factor=1.0), "factor must be >= 0 and < 1, but got 1.0"),
        (dict(factor=-0.1), "factor must be >= 0 and < 1"),
        (dict(threshold=-1e-4), "threshold must be >= 0"),
        (dict(patience=-1), "patience must be >= 0"),
        (dict(min_value=[0.1, 0.2, 0.3]), "min_value has 3 values but the optimizer has 2"),
        (dict(by_epoch=False), "by_epoch must be True"),
        (dict(convert_to_iter_based=True), "cannot be converted to an iteration-based schedule"),
    ],
)
def test_bad_arguments_are_named(changes, message, make_optimizer):
    cfg = dict(type="ReduceOnPlateauLR", **changes)
    with pytest.raises(ValueError, match=message) as err:
        build_param_schedulers(cfg, make_optimizer(), epoch_length=5)
    assert "param_scheduler (type='ReduceOnPlateauLR')" in str(err.value)


def test_metrics_that_are_not_a_dict_are_refused(make_optimizer):
    with pytest.raises(TypeError, match="takes the validation metrics as a dict, but got list"):
        ReduceOnPlateauParamScheduler(make_optimizer(), "lr").step([0.3])


def test_the_three_are_registered_under_mmengines_names():
    for cls in (ReduceOnPlateauParamScheduler, ReduceOnPlateauLR, ReduceOnPlateauMomentum):
        assert PARAM_SCHEDULERS.get(cls.__name__) is cls
        assert cls.need_val_args is True


@HOOKS.register_module()
class RecordLrPerEpoch(Hook):
    """Records the learning rate each training epoch runs with, and the validation metrics."""

    def __init__(self):
        self.lrs, self.metrics = [], []

    def before_train_epoch(self, runner):
        self.lrs.append(runner.optim_wrapper.param_groups[0]["lr"])

    def after_val_epoch(self, runner, metrics=None):
        self.metrics.append(dict(metrics))


def test_a_runner_lowers_the_lr_when_accuracy_stops_improving(tmp_path):
    from runnerx.runner import Runner

    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.train_cfg.max_epochs = 3
    # after the first validation no accuracy can beat the best by 1000 points: every later
    # validation inside the window (begin=0 to end=max_epochs) is a bad one
    cfg.param_scheduler = dict(
        type="ReduceOnPlateauLR",
        monitor="accuracy/top1",
        rule="greater",
        threshold=1000,
        threshold_rule="abs",
        patience=0,
        factor=0.5,
    )
    cfg.custom_hooks = [dict(type="RecordLrPerEpoch")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    (record,) = [hook for hook in runner.hooks if isinstance(hook, RecordLrPerEpoch)]
    assert len(record.metrics) == 3 and all("accuracy/top1" in m for m in record.metrics)
    # validation 1 sets the best; validation 2 (2 epochs counted) halves the lr; validation 3
    # comes after 3 epochs counted, at end=3, outside the window (MMEngine's Runner does the same)
    assert record.lrs == [0.1, 0.1, 0.05]
    (scheduler,) = runner.param_schedulers
    assert scheduler.best == record.metrics[0]["accuracy/top1"]
    assert runner.optim_wrapper.param_groups[0]["lr"] == 0.05
