"""Averaged models: EMA math by hand, interval, buffers, state_dict, the per-tensor fallback."""

import logging

import pytest
import torch
from torch import nn

import runnerx.model.averaged_model as averaged_model
from runnerx.logging import logger as logger_module
from runnerx.model import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from runnerx.registry import MODELS


class NetWithNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.norm = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.norm(self.fc(x))


def set_weights(model, value):
    """Give every parameter and float buffer the value ``value``; count batches as ``value``."""
    with torch.no_grad():
        for tensor in [*model.parameters(), *model.buffers()]:
            tensor.fill_(value)


def expected_average(values, weight_at, interval=1):
    """The average a hand computation gives for the model values seen at each update."""
    average = None
    for step, value in enumerate(values):
        if step == 0:
            average = value
        elif step % interval == 0:
            weight = weight_at(step)
            average = (1 - weight) * average + weight * value
    return average


VALUES = [1.0, 3.0, -2.0, 5.0, 0.5]


@pytest.mark.parametrize("interval", [1, 2])
def test_ema_matches_a_hand_computation(interval):
    model = NetWithNorm()
    ema = ExponentialMovingAverage(model, momentum=0.25, interval=interval)
    for value in VALUES:
        set_weights(model, value)
        ema.update_parameters(model)
    expected = expected_average(VALUES, lambda step: 0.25, interval)
    assert torch.allclose(ema.module.fc.weight, torch.full((2, 3), expected))
    assert ema.steps.item() == len(VALUES)
    # buffers are copied on every update, interval or not, when they are not averaged
    assert ema.module.norm.running_mean.eq(VALUES[-1]).all()


def test_update_buffers_averages_float_buffers_and_copies_the_others():
    model = NetWithNorm()
    ema = ExponentialMovingAverage(model, momentum=0.5, update_buffers=True)
    for value in VALUES:
        set_weights(model, value)
        model.norm.num_batches_tracked.fill_(int(value * 10))
        ema.update_parameters(model)
    expected = expected_average(VALUES, lambda step: 0.5)
    assert torch.allclose(ema.module.norm.running_var, torch.full((2,), expected))
    assert torch.allclose(ema.module.fc.bias, torch.full((2,), expected))
    assert ema.module.norm.num_batches_tracked.item() == 5


def test_momentum_annealing_and_swa_weights():
    model = nn.Linear(2, 2)
    annealing = MomentumAnnealingEMA(model, momentum=0.1, gamma=2)
    swa = StochasticWeightAverage(model, interval=2)
    for value in VALUES:
        set_weights(model, value)
        annealing.update_parameters(model)
        swa.update_parameters(model)
    expected = expected_average(VALUES, lambda step: max(0.1, 2 / (2 + step)))
    assert torch.allclose(annealing.module.weight, torch.full((2, 2), expected))
    assert torch.allclose(swa.module.weight, torch.full((2, 2), (1.0 - 2.0 + 0.5) / 3))


def test_the_loop_fallback_gives_the_same_result(monkeypatch):
    def run():
        torch.manual_seed(0)
        model = NetWithNorm()
        ema = ExponentialMovingAverage(model, momentum=0.3, update_buffers=True)
        for _ in range(4):
            set_weights(model, torch.rand(()).item())
            ema.update_parameters(model)
        return ema.state_dict()

    vectorised = run()
    monkeypatch.setattr(averaged_model, "_FOREACH_LERP", False)
    monkeypatch.setattr(averaged_model, "_FOREACH_COPY", False)
    looped = run()
    assert all(torch.equal(vectorised[key], looped[key]) for key in vectorised)


def test_an_mmengine_style_avg_func_override_is_called_per_tensor():
    class HalfWay(BaseAveragedModel):
        def avg_func(self, averaged_param, source_param, steps):
            averaged_param.add_(source_param - averaged_param, alpha=0.5)

    model = nn.Linear(2, 2)
    averaged = HalfWay(model)
    for value in (2.0, 4.0, 0.0):
        set_weights(model, value)
        averaged.update_parameters(model)
    assert averaged.module.weight.eq(1.5).all()  # 2 -> 3 -> 1.5


def test_the_copy_is_frozen_and_forward_runs_it():
    model = NetWithNorm().eval()
    ema = ExponentialMovingAverage(model)
    assert not any(p.requires_grad for p in ema.module.parameters())
    assert ema.module.fc.weight is not model.fc.weight
    x = torch.randn(4, 3)
    assert torch.equal(ema.eval()(x), model(x))
    ema.update_parameters(model)
    assert not ema.module.fc.weight.requires_grad


def test_state_dict_round_trip_restores_the_step_count():
    model = nn.Linear(2, 2)
    ema = ExponentialMovingAverage(model, momentum=0.5)
    for value in (1.0, 3.0):
        set_weights(model, value)
        ema.update_parameters(model)
    state = ema.state_dict()
    assert set(state) == {"steps", "module.weight", "module.bias"}

    restored = ExponentialMovingAverage(nn.Linear(2, 2), momentum=0.5)
    restored.load_state_dict(state)
    assert restored.steps.item() == 2 and restored.module.weight.eq(2.0).all()
    set_weights(model, 4.0)
    restored.update_parameters(model)  # an average, not the first update's copy
    assert restored.module.weight.eq(3.0).all()


def test_device_puts_the_copy_there_and_updates_from_a_model_elsewhere():
    model = nn.Linear(2, 2)
    ema = ExponentialMovingAverage(model, device="meta")
    assert ema.module.weight.device == torch.device("meta")
    ema.update_parameters(model)  # the CPU model's weights are brought to the copy's device
    assert ema.steps.device == torch.device("meta")


def test_bad_arguments_and_the_build_from_config():
    model = nn.Linear(2, 2)
    with pytest.raises(ValueError, match=r"momentum must be in \(0, 1\), but got 1.5"):
        ExponentialMovingAverage(model, momentum=1.5)
    with pytest.raises(ValueError, match="interval must be a positive int"):
        ExponentialMovingAverage(model, interval=0)
    with pytest.raises(ValueError, match="gamma must be > 0"):
        MomentumAnnealingEMA(model, gamma=0)
    ema = ExponentialMovingAverage(model)
    with pytest.raises(ValueError, match="the model has 4 tensors to average but"):
        ema.update_parameters(nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2)))

    built = MODELS.build(dict(type="ExponentialMovingAverage", momentum=0.01), {"model": model})
    assert isinstance(built, ExponentialMovingAverage) and built.momentum == 0.01


def test_a_large_momentum_is_warned_about_in_the_log(monkeypatch, logged_warnings, capsys):
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("ema_test"))
    warned = logged_warnings("ema_test")
    ExponentialMovingAverage(nn.Linear(2, 2), momentum=0.5)
    assert warned == []
    ExponentialMovingAverage(nn.Linear(2, 2), momentum=0.9)
    [message] = warned
    assert message.startswith("EMA momentum 0.9 is the weight of the *new* value")
    monkeypatch.setattr(logger_module, "_current_logger", None)  # outside a run: printed
    ExponentialMovingAverage(nn.Linear(2, 2), momentum=0.9)
    assert "EMA momentum 0.9" in capsys.readouterr().out
