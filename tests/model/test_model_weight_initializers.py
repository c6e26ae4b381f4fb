"""WEIGHT_INITIALIZERS: init_cfg types are looked up there, so a user's registered BaseInit
subclass works as in MMEngine; runnerx.model.weight_init offers mmengine.model.weight_init's
names. mmengine-lite is the oracle for the weights."""

from __future__ import annotations

import importlib
import inspect

import pytest
import torch
from torch import nn

import runnerx.model as rx_model
from runnerx.model import BaseModule

mm_init = pytest.importorskip("mmengine.model.weight_init")
mm_registry = pytest.importorskip("mmengine.registry")


def registries():
    from runnerx.registry import WEIGHT_INITIALIZERS

    return WEIGHT_INITIALIZERS, mm_registry.WEIGHT_INITIALIZERS


def test_the_built_in_initializers_are_registered_under_mmengines_names():
    ours, theirs = registries()
    assert list(ours.module_dict) == list(theirs.module_dict)
    for name, cls in ours.module_dict.items():
        assert cls is getattr(rx_model, f"{name}Init"), name


class ToyNet(BaseModule):
    """initialize.md's ToyNet, with a Linear subclass that has a Linear child: MMEngine
    initialises a module's children before the module itself."""

    def __init__(self, init_cfg=None):
        super().__init__(init_cfg)
        self.conv1 = nn.Conv2d(1, 1, 1)
        self.conv2 = nn.Conv2d(1, 1, 1)
        self.head = nn.Linear(3, 2)
        self.nested = NestedLinear()


class NestedLinear(nn.Linear):
    def __init__(self):
        super().__init__(4, 4)
        self.inner = nn.Linear(4, 4)


@pytest.fixture
def ones_registered():
    """initialize.md's custom initializer, registered in both registries as 'Ones' (it honours
    ``layer`` and ``override`` through MMEngine's attributes)."""
    added = []
    for registry, base in zip(registries(), (rx_model.BaseInit, mm_init.BaseInit), strict=True):

        class OnesInit(base):
            def __call__(self, module):
                def init(sub):
                    names = {type(sub).__name__, *(b.__name__ for b in type(sub).__bases__)}
                    if self.wholemodule or names & set(self.layer):
                        nn.init.ones_(sub.weight)
                        if getattr(sub, "bias", None) is not None:
                            nn.init.constant_(sub.bias, self.bias)

                module.apply(init)

        registry.register_module(name="Ones", module=OnesInit)
        added.append(registry)
    yield
    for registry in added:
        registry.module_dict.pop("Ones")


def initialised(init_cfg, package: str) -> dict:
    torch.manual_seed(1)
    net = ToyNet(init_cfg)
    torch.manual_seed(0)
    if package == "runnerx":
        net.init_weights()
    else:
        mm_init.initialize(net, init_cfg)
    return net.state_dict()


CFGS = [
    dict(type="Ones", layer="Conv2d", bias=2),
    [dict(type="Ones", layer="Linear"), dict(type="Kaiming", layer="Conv2d", bias_prob=0.01)],
    dict(type="Normal", layer="Conv2d", std=0.1, override=dict(name="head", type="Ones")),
    dict(type="Ones", layer="Conv2d", override=dict(name="nested")),
    [
        dict(type="Xavier", layer="Linear", distribution="uniform"),
        dict(type="Uniform", layer="Conv2d"),
    ],
]


@pytest.mark.parametrize("init_cfg", CFGS)
def test_init_cfg_with_a_registered_initializer_gives_mmengines_weights(ones_registered, init_cfg):
    ours, theirs = initialised(init_cfg, "runnerx"), initialised(init_cfg, "mmengine")
    assert ours.keys() == theirs.keys()
    for key in ours:
        torch.testing.assert_close(ours[key], theirs[key], rtol=0, atol=0, msg=key)


def test_an_unknown_type_suggests_registered_initializers_too(ones_registered):
    with pytest.raises(ValueError, match="did you mean 'Ones'"):
        ToyNet(dict(type="Onez", layer="Conv2d")).init_weights()
    with pytest.raises(ValueError, match="override 'head' .* no 'type'"):
        ToyNet(dict(type="Ones", layer="Conv2d", override=dict(name="head", val=1))).init_weights()


def mmengine_weight_init_names() -> set[str]:
    return {
        name
        for name, value in vars(mm_init).items()
        if not name.startswith("_")
        and (inspect.isfunction(value) or inspect.isclass(value))
        and value.__module__ == mm_init.__name__
    }


def test_weight_init_offers_mmengines_names_as_runnerx_model_objects():
    ours = importlib.import_module("runnerx.model.weight_init")
    names = mmengine_weight_init_names()
    assert {"BaseInit", "trunc_normal_", "constant_init", "PretrainedInit", "initialize"} <= names
    assert names <= set(ours.__all__)
    for name in names:
        value = getattr(ours, name)
        if hasattr(rx_model, name):
            assert value is getattr(rx_model, name), name
    assert ours.trunc_normal_ is torch.nn.init.trunc_normal_


def test_update_init_info_records_the_initializer_of_changed_parameters():
    records = []
    for update in (importlib.import_module("runnerx.model.weight_init").update_init_info, None):
        update = update or mm_init.update_init_info
        net = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
        net._params_init_info = {
            param: dict(init_info="default", tmp_mean_value=param.data.mean())
            for param in net.parameters()
        }
        nn.init.constant_(net[1].weight, 3.0)
        update(net, init_info="Constant: val=3")
        records.append([info["init_info"] for info in net._params_init_info.values()])
    assert records[0] == records[1] == ["default", "default", "Constant: val=3", "default"]
