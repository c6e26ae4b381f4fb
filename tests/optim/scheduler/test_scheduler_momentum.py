"""Momentum schedulers drive SGD's ``momentum`` and Adam's ``betas[0]``; what they accept."""

import pytest
import torch

from runnerx.optim import scheduler as ours


def test_step_momentum_on_sgd_changes_momentum_only(make_optimizer, record, values):
    optimizer = make_optimizer("sgd")
    scheduler = ours.StepMomentum(optimizer, step_size=3, gamma=0.5)
    curve = record(optimizer, scheduler.step, key="momentum", steps=7)
    assert [row[0] for row in curve] == pytest.approx([0.9] * 3 + [0.45] * 3 + [0.225])
    assert values(optimizer, "lr") == [0.1, 0.05]


def test_momentum_on_adam_is_betas0(make_optimizer, record, values):
    optimizer = make_optimizer("adam")
    scheduler = ours.LinearMomentum(optimizer, start_factor=0.5, end=6)
    curve = record(optimizer, scheduler.step, key="betas0", steps=8)
    assert [row[0] for row in curve] == pytest.approx([0.45, 0.54, 0.63, 0.72, 0.81, 0.9, 0.9, 0.9])
    assert values(optimizer, "momentum") == values(optimizer, "betas0")
    assert [group["betas"][1] for group in optimizer.param_groups] == [0.99, 0.99]
    param = optimizer.param_groups[0]["params"][0]
    param.grad = torch.ones_like(param)
    optimizer.step()  # Adam still runs with the scheduled betas
    assert torch.all(param != 0)


def test_rmsprop_momentum_is_scheduled():
    optimizer = torch.optim.RMSprop([torch.nn.Parameter(torch.zeros(1))], lr=0.1, momentum=0.8)
    ours.ExponentialMomentum(optimizer, gamma=0.5).step()
    assert optimizer.param_groups[0]["momentum"] == pytest.approx(0.4)
    assert "betas" not in optimizer.param_groups[0]


def test_optimizer_without_momentum_is_refused():
    optimizer = torch.optim.Adagrad([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="Adagrad has neither 'momentum' nor 'betas'"):
        ours.CosineAnnealingMomentum(optimizer, T_max=10)


class _Wrapper:
    """What a scheduler sees of an OptimWrapper: the optimizer it wraps."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups


@pytest.mark.parametrize("name", ["StepLR", "StepMomentum"])
def test_an_optim_wrapper_is_unwrapped(name, make_optimizer):
    optimizer = make_optimizer("adam")
    scheduler = getattr(ours, name)(_Wrapper(optimizer), step_size=1, gamma=0.5)
    scheduler.step()
    assert scheduler.optimizer is optimizer
    key = "lr" if name == "StepLR" else "momentum"
    assert optimizer.param_groups[1][key] == pytest.approx({"lr": 0.025, "momentum": 0.45}[key])


def test_what_is_not_one_optimizer_is_refused(make_optimizer):
    with pytest.raises(TypeError, match="build one list of schedulers per optimizer"):
        ours.StepLR({"generator": make_optimizer()}, step_size=1)
    with pytest.raises(TypeError, match="must be a torch.optim.Optimizer or an OptimWrapper"):
        ours.StepLR(object(), step_size=1)


def test_a_param_the_groups_lack_is_named(make_optimizer):
    with pytest.raises(
        KeyError, match=r"param_groups\[0\] of SGD has no 'eps' to schedule \(its keys: .*lr"
    ):
        ours.LinearParamScheduler(make_optimizer(), "eps")
