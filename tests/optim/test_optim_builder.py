"""build_optim_wrapper and the OPTIMIZERS registry: every torch optimizer, flags, errors, bnb."""

import importlib.machinery
import importlib.util
import inspect
import sys
import types

import pytest
import torch
from torch import nn

from runnerx.config import Config
from runnerx.optim import AmpOptimWrapper, OptimWrapper, build_optim_wrapper
from runnerx.optim.optimizers import (
    TORCH_OPTIMIZERS,
    register_bitsandbytes_optimizers,
    register_torch_optimizers,
)
from runnerx.registry import OPTIMIZERS, NotRegisteredError, Registry


def matrix_model():
    # 2-D parameters only, so that every optimizer (Muon included) accepts them
    return nn.Sequential(nn.Linear(4, 4, bias=False), nn.Linear(4, 2, bias=False))


# TORCH_OPTIMIZERS holds torch's names (the base class, 'Adafactor'); these are the registry's
REGISTERED_TORCH_OPTIMIZERS = sorted(
    {"TorchAdafactor" if name == "Adafactor" else name for name in TORCH_OPTIMIZERS} - {"Optimizer"}
)


@pytest.mark.parametrize("name", REGISTERED_TORCH_OPTIMIZERS)
def test_every_torch_optimizer_builds_from_a_config(name):
    optimizer_type = OPTIMIZERS.get(name)
    optimizer_cfg = dict(type=name)
    if "lr" in inspect.signature(optimizer_type).parameters:
        optimizer_cfg["lr"] = 0.01
    wrapper = build_optim_wrapper(matrix_model(), dict(optimizer=optimizer_cfg))
    assert type(wrapper.optimizer) is optimizer_type
    assert type(wrapper.optimizer).__module__.startswith("torch.optim")
    if "lr" in optimizer_cfg:
        assert wrapper.get_lr() == {"lr": [0.01]}


def test_all_of_torch_optim_is_registered_and_torchs_adafactor_is_torchadafactor():
    expected = {
        name
        for name, obj in vars(torch.optim).items()
        if isinstance(obj, type)
        and issubclass(obj, torch.optim.Optimizer)
        and obj is not torch.optim.Optimizer
    }
    expected = {"TorchAdafactor" if name == "Adafactor" else name for name in expected}
    assert expected <= set(OPTIMIZERS.module_dict)
    if hasattr(torch.optim, "Adafactor"):  # 'Adafactor' is transformers', as in MMEngine
        assert OPTIMIZERS.get("TorchAdafactor") is torch.optim.Adafactor
        assert OPTIMIZERS.get("Adafactor") is not torch.optim.Adafactor


def test_torch_optimizers_is_mmengines_list_of_torch_optim_names():
    in_torch_optim = [
        name
        for name, obj in vars(torch.optim).items()
        if isinstance(obj, type) and issubclass(obj, torch.optim.Optimizer)
    ]
    assert sorted(in_torch_optim) == TORCH_OPTIMIZERS
    assert "Optimizer" in TORCH_OPTIMIZERS
    mmengine_builder = pytest.importorskip("mmengine.optim.optimizer.builder")
    assert TORCH_OPTIMIZERS == mmengine_builder.TORCH_OPTIMIZERS


def test_optimizer_flags_pass_through():
    model = matrix_model()
    fused = build_optim_wrapper(model, dict(optimizer=dict(type="AdamW", lr=1e-3, fused=True)))
    assert fused.defaults["fused"] is True
    fused.update_params(model(torch.randn(3, 4)).sum())  # fused AdamW runs on CPU too
    foreach = build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1, foreach=False)))
    assert foreach.defaults["foreach"] is False
    capturable = build_optim_wrapper(
        model, dict(optimizer=dict(type="Adam", lr=1e-3, capturable=True))
    )
    assert capturable.defaults["capturable"] is True


def test_unknown_optimizer_type_names_key_registry_and_close_match():
    cfg = Config(dict(optim_wrapper=dict(optimizer=dict(type="SDG", lr=0.1))))
    with pytest.raises(NotRegisteredError) as info:
        build_optim_wrapper(matrix_model(), cfg.optim_wrapper)
    message = str(info.value)
    assert "optim_wrapper.optimizer.type" in message
    assert "'optimizer' registry" in message
    assert "Did you mean 'SGD'" in message
    # a plain dict gets the same path
    with pytest.raises(NotRegisteredError, match="optim_wrapper.optimizer.type"):
        build_optim_wrapper(matrix_model(), dict(optimizer=dict(type="SDG", lr=0.1)))


def test_unknown_optimizer_argument_names_the_key():
    with pytest.raises(TypeError, match="optim_wrapper.optimizer has 'mometum'") as info:
        build_optim_wrapper(matrix_model(), dict(optimizer=dict(type="SGD", lr=0.1, mometum=0.9)))
    assert "Did you mean 'momentum'" in str(info.value)


def test_unknown_wrapper_argument_names_the_key():
    with pytest.raises(TypeError, match="Did you mean 'accumulative_counts'"):
        build_optim_wrapper(
            matrix_model(),
            dict(
                type="AmpOptimWrapper",
                accumulative_count=2,
                optimizer=dict(type="SGD", lr=0.1),
            ),
        )


SGD = dict(type="SGD", lr=0.1)
AMP16 = dict(type="AmpOptimWrapper", dtype="float16", optimizer=SGD)


@pytest.mark.parametrize(
    "cfg, start",
    [
        (dict(optimizer=SGD, clip_grad=dict(max_nrm=1.0)), "optim_wrapper.clip_grad={'max_nrm'"),
        (dict(optimizer=SGD, clip_grad=dict(type="value")), "optim_wrapper.clip_grad={'type'"),
        (dict(AMP16, dtype="float32"), "optim_wrapper.dtype='float32' is not supported"),
        (dict(AMP16, loss_scale="x"), "optim_wrapper.loss_scale='x' is not valid"),
        (dict(AMP16, loss_scale=dict(init_scal=1.0)), "optim_wrapper.loss_scale has 'init_scal'"),
        (dict(optimizer=SGD, paramwise_cfg=[]), "optim_wrapper.paramwise_cfg must be a dict"),
        (
            dict(optimizer=SGD, paramwise_cfg=dict(bias_lr_mutl=1.0)),
            "optim_wrapper.paramwise_cfg has an unknown key 'bias_lr_mutl'",
        ),
        (
            dict(optimizer=SGD, paramwise_cfg=dict(norm_decay_mult=0.0)),
            "optim_wrapper.paramwise_cfg.norm_decay_mult multiplies",
        ),
        (
            dict(optimizer=SGD, paramwise_cfg=dict(custom_keys=[])),
            "optim_wrapper.paramwise_cfg.custom_keys must be",
        ),
        (
            dict(optimizer=SGD, paramwise_cfg=dict(custom_keys=dict(a=1))),
            "optim_wrapper.paramwise_cfg.custom_keys['a'] must be",
        ),
    ],
)
def test_errors_that_name_their_key_get_no_while_building_in_front(cfg, start):
    cfg = Config(dict(optim_wrapper=cfg))  # a ConfigDict, as in a run
    with pytest.raises((TypeError, ValueError)) as info:
        build_optim_wrapper(matrix_model(), cfg.optim_wrapper)
    assert str(info.value).startswith(start), str(info.value)


def test_wrapper_type_and_options_come_from_the_config():
    wrapper = build_optim_wrapper(
        matrix_model(),
        dict(
            type="AmpOptimWrapper",
            dtype="bfloat16",
            accumulative_counts=2,
            clip_grad=dict(max_norm=1.0),
            optimizer=dict(type="SGD", lr=0.1),
        ),
    )
    assert isinstance(wrapper, AmpOptimWrapper)
    assert wrapper.cast_dtype is torch.bfloat16
    assert wrapper.clip_grad_kwargs == {"max_norm": 1.0}


def test_a_built_optimizer_or_wrapper_is_accepted():
    model = matrix_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    wrapper = build_optim_wrapper(model, dict(optimizer=optimizer, accumulative_counts=2))
    assert wrapper.optimizer is optimizer
    assert build_optim_wrapper(model, wrapper) is wrapper


def test_custom_constructor_decides():
    from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS

    @OPTIM_WRAPPER_CONSTRUCTORS.register_module(force=True)
    class FirstLayerOnly:
        def __init__(self, optim_wrapper_cfg, paramwise_cfg=None):
            self.lr = optim_wrapper_cfg["lr"]

        def __call__(self, model):
            return OptimWrapper(torch.optim.SGD(model[0].parameters(), lr=self.lr))

    wrapper = build_optim_wrapper(matrix_model(), dict(constructor="FirstLayerOnly", lr=0.3))
    assert wrapper.get_lr() == {"lr": [0.3]} and len(wrapper.param_groups[0]["params"]) == 1


def fake_bitsandbytes():
    module = types.ModuleType("bitsandbytes")
    module.__spec__ = importlib.machinery.ModuleSpec("bitsandbytes", None)
    module.optim = types.SimpleNamespace(
        AdamW8bit=type("AdamW8bit", (torch.optim.AdamW,), {}),
        PagedAdamW8bit=type("PagedAdamW8bit", (torch.optim.AdamW,), {}),
        Adam=type("Adam", (torch.optim.Adam,), {}),  # its name is taken by torch's Adam
        GlobalOptimManager=type("GlobalOptimManager", (), {}),  # not an optimizer
    )
    return module


def test_bitsandbytes_optimizers_are_registered_when_installed(monkeypatch):
    monkeypatch.setitem(sys.modules, "bitsandbytes", fake_bitsandbytes())
    registry = Registry("optimizer", scope="bnb_test")
    register_torch_optimizers(registry)
    registered = register_bitsandbytes_optimizers(registry)
    assert sorted(registered) == ["AdamW8bit", "PagedAdamW8bit", "bnb_Adam"]
    assert registry.get("Adam") is torch.optim.Adam
    assert registry.get("AdamW8bit") is sys.modules["bitsandbytes"].optim.AdamW8bit


def test_bitsandbytes_absent_or_broken(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert register_bitsandbytes_optimizers(Registry("optimizer", scope="bnb_absent")) == []

    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: importlib.machinery.ModuleSpec(name, None)
    )
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # makes `import bitsandbytes` fail
    with pytest.warns(UserWarning, match="bitsandbytes is installed but could not be imported"):
        assert register_bitsandbytes_optimizers(Registry("optimizer", scope="bnb_broken")) == []


def test_real_bitsandbytes_when_installed():
    pytest.importorskip("bitsandbytes")
    assert "AdamW8bit" in OPTIMIZERS and "PagedAdamW8bit" in OPTIMIZERS
