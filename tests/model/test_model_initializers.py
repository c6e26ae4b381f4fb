"""MMEngine's weight-initialiser functions and classes: the same seed gives the same weights as
mmengine-lite's, and bad arguments fail when the initialiser is made."""

from __future__ import annotations

import inspect

import pytest
import torch
from torch import nn

import runnerx.model as rx

mm = pytest.importorskip("mmengine.model")

FUNCTIONS = [
    ("constant_init", dict(val=0.3, bias=0.1)),
    ("xavier_init", dict(gain=2, distribution="uniform", bias=0.2)),
    ("normal_init", dict(mean=0.5, std=0.01, bias=-1)),
    ("uniform_init", dict(a=-1, b=1, bias=0.5)),
    ("kaiming_init", dict(mode="fan_in", nonlinearity="leaky_relu", distribution="uniform")),
    ("kaiming_init", dict()),
    ("caffe2_xavier_init", dict(bias=0.3)),
]


def conv() -> nn.Module:
    return nn.Conv2d(3, 8, 3)


def initialised(init, *args, **kwargs) -> dict:
    module = conv()
    torch.manual_seed(0)
    init(module, *args, **kwargs)
    return module.state_dict()


def assert_same(ours: dict, theirs: dict) -> None:
    assert ours.keys() == theirs.keys()
    for key in ours:
        torch.testing.assert_close(ours[key], theirs[key], rtol=0, atol=0)


@pytest.mark.parametrize(("name", "kwargs"), FUNCTIONS)
def test_functions_give_mmengines_weights(name, kwargs):
    assert_same(initialised(getattr(rx, name), **kwargs), initialised(getattr(mm, name), **kwargs))


def test_truncated_normal_stays_in_its_bounds():
    # torch's trunc_normal_ (which runnerx uses) draws other values than MMEngine's copy of
    # an older version, so only the distribution is compared
    module = nn.Linear(100, 100)
    rx.trunc_normal_init(module, std=0.02, a=-0.03, b=0.03, bias=0.5)
    assert module.weight.abs().max() <= 0.03 and 0.01 < module.weight.std() < 0.02
    assert torch.equal(module.bias, torch.full((100,), 0.5))
    net = small_net()
    rx.TruncNormalInit(std=0.02, a=-0.01, b=0.01, layer="Linear")(net)
    assert net[3].weight.abs().max() <= 0.01


def test_a_module_without_bias_is_fine():
    linear = nn.Linear(4, 2, bias=False)
    rx.constant_init(linear, 1.5, bias=3)
    assert torch.equal(linear.weight, torch.full((2, 4), 1.5))


def test_bias_init_with_prob_is_mmengines():
    for prob in (0.01, 0.1, 0.5):
        assert rx.bias_init_with_prob(prob) == pytest.approx(mm.bias_init_with_prob(prob))
    assert torch.sigmoid(torch.tensor(rx.bias_init_with_prob(0.01))).item() == pytest.approx(0.01)


CLASSES = [
    ("ConstantInit", dict(val=2.0, bias=1.0, layer="Conv2d")),
    ("NormalInit", dict(std=0.1, bias_prob=0.01, layer=["Conv2d", "Linear"])),
    ("XavierInit", dict(distribution="uniform", layer="Linear")),
    ("KaimingInit", dict(layer="Conv2d")),
    ("UniformInit", dict(a=-0.1, b=0.1, layer="Conv2d")),
    ("Caffe2XavierInit", dict(layer="Conv2d")),
    ("ConstantInit", dict(val=2.0)),  # no layer: initialises nothing, as in MMEngine
]


def small_net() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4, 2))


@pytest.mark.parametrize(("name", "kwargs"), CLASSES)
def test_classes_initialise_the_layers_mmengines_do(name, kwargs):
    results = []
    for package in (rx, mm):
        torch.manual_seed(1)
        net = small_net()
        torch.manual_seed(0)
        getattr(package, name)(**kwargs)(net)
        results.append(net.state_dict())
    assert_same(*results)


POSITIONAL = [
    ("ConstantInit", (2.0,)),
    ("XavierInit", (2, "uniform")),
    ("NormalInit", (0.5, 0.1)),
    ("UniformInit", (-0.1, 0.1)),
    ("KaimingInit", (0, "fan_in", "leaky_relu", "uniform")),
]


def test_classes_have_mmengines_signatures():
    for name in ("Constant", "Xavier", "Normal", "TruncNormal", "Uniform", "Kaiming"):
        ours, theirs = (inspect.signature(getattr(p, f"{name}Init")) for p in (rx, mm))
        assert list(ours.parameters) == list(theirs.parameters), name
        for param in ours.parameters.values():
            assert param.default == theirs.parameters[param.name].default, (name, param)


@pytest.mark.parametrize(("name", "args"), POSITIONAL)
def test_classes_take_mmengines_arguments_by_position(name, args):
    results = []
    for cls in (getattr(rx, name), getattr(mm, name)):
        torch.manual_seed(1)
        net = small_net()
        torch.manual_seed(0)
        cls(*args, layer="Conv2d")(net)
        results.append(net.state_dict())
    assert_same(*results)


def test_bad_arguments_fail_when_the_initialiser_is_made():
    with pytest.raises(TypeError, match="'val'"):
        rx.ConstantInit(layer="Conv2d")
    with pytest.raises(TypeError, match=r"'Normal' takes"):
        rx.NormalInit(sdt=0.1)
    with pytest.raises(ValueError, match="'normal' or 'uniform'"):
        rx.KaimingInit(distribution="gaussian")


def test_pretrained_init_loads_weights(tmp_path):
    source, target = small_net(), small_net()
    torch.save(
        {"state_dict": {f"backbone.{k}": v for k, v in source.state_dict().items()}},
        tmp_path / "w.pth",
    )
    rx.PretrainedInit(str(tmp_path / "w.pth"), prefix="backbone.")(target)
    assert_same(target.state_dict(), source.state_dict())
