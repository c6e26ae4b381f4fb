"""A schedule saved mid-way (through torch.save and a weights-only load) continues exactly."""

import pytest
import torch

from runnerx.optim.scheduler import build_param_schedulers

SHAPE_ARGS = {
    "Constant": dict(factor=0.5, end=20),
    "Linear": dict(start_factor=0.1, end=25),
    "Step": dict(step_size=4),
    "MultiStep": dict(milestones=[5, 15, 15, 18]),
    "Exponential": dict(gamma=0.9),
    "CosineAnnealing": dict(T_max=12, eta_min=0.01),
    "CosineRestart": dict(periods=[10, 15], restart_weights=[1, 0.5], eta_min=0.001),
    "Poly": dict(power=2.0, end=30),
}


def _configs():
    for shape, kwargs in SHAPE_ARGS.items():
        yield f"{shape}LR", "sgd", "lr", dict(type=f"{shape}LR", **kwargs)
        yield f"{shape}Momentum", "adam", "betas0", dict(type=f"{shape}Momentum", **kwargs)
        generic = dict(type=f"{shape}ParamScheduler", param_name="weight_decay", **kwargs)
        yield f"{shape}ParamScheduler", "sgd", "weight_decay", generic
    yield "OneCycleLR", "sgd", "lr", dict(type="OneCycleLR", eta_max=0.5, total_steps=40)
    yield "OneCycleMomentum", "sgd", "momentum", dict(type="OneCycleMomentum", total_steps=40)


@pytest.mark.parametrize(
    ("kind", "key", "cfg"),
    [pytest.param(kind, key, cfg, id=name) for name, kind, key, cfg in _configs()],
)
def test_resumed_schedule_continues_identically(cfg, kind, key, make_optimizer, record, tmp_path):
    cfg = dict(cfg, by_epoch=False)
    optimizer = make_optimizer(kind)
    (scheduler,) = build_param_schedulers(cfg, optimizer)
    for _ in range(13):
        scheduler.step()
    checkpoint = tmp_path / "checkpoint.pth"
    torch.save(
        {"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, checkpoint
    )
    uninterrupted = record(optimizer, scheduler.step, key=key, steps=25)

    saved = torch.load(checkpoint, weights_only=True)
    resumed_optimizer = make_optimizer(kind)
    (resumed,) = build_param_schedulers(cfg, resumed_optimizer)
    resumed_optimizer.load_state_dict(saved["optimizer"])
    resumed.load_state_dict(saved["scheduler"])
    assert record(resumed_optimizer, resumed.step, key=key, steps=25) == uninterrupted
    assert resumed.state_dict() == scheduler.state_dict()
    assert len({tuple(values) for values in uninterrupted}) > 1


def test_state_dict_is_a_snapshot(make_optimizer):
    optimizer = make_optimizer()
    (scheduler,) = build_param_schedulers(dict(type="ExponentialLR", gamma=0.5), optimizer)
    state = scheduler.state_dict()
    scheduler.step()
    assert state["last_step"] == 0 and state["_last_value"] == [0.1, 0.05]
    assert "optimizer" not in state
    assert scheduler.get_last_value() == [0.05, 0.025]


def test_state_dict_carries_what_mmengine_state_dicts_carry(make_optimizer):
    optimizer = make_optimizer()
    (scheduler,) = build_param_schedulers(dict(type="MultiStepLR", milestones=[2, 2]), optimizer)
    state = scheduler.state_dict()
    expected = {"param_name", "begin", "end", "by_epoch", "verbose", "last_step", "_global_step"}
    assert expected | {"base_values", "_last_value", "milestones", "gamma"} <= set(state)
    assert state["milestones"] == {2: 2} and state["param_name"] == "lr"


def test_last_step_without_recorded_initial_values_says_what_to_load(make_optimizer):
    from runnerx.optim.scheduler import LinearLR

    with pytest.raises(KeyError, match=r"param_groups\[0\] has no 'initial_lr'"):
        LinearLR(make_optimizer(), last_step=5)
