"""build_model: a Runner's ``model`` argument as a module, weights initialised unless loaded."""

import pytest
import torch
from torch import nn

from runnerx.model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor, build_model
from runnerx.registry import MODELS


@MODELS.register_module()
class BuildTestNet(BaseModel):
    """A linear layer that init_cfg sets to ones."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor, init_cfg=dict(type="Constant", layer="Linear", val=1))
        self.fc = nn.Linear(2, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return self.fc(inputs)


def test_a_config_dict_is_built_with_the_runners_data_preprocessor_unless_it_names_one():
    given = dict(type="ImgDataPreprocessor", mean=[0.0], std=[1.0])
    model = build_model(dict(type="BuildTestNet"), data_preprocessor=given)
    assert type(model.data_preprocessor) is ImgDataPreprocessor
    own = dict(type="BuildTestNet", data_preprocessor=dict(type="BaseDataPreprocessor"))
    model = build_model(own, data_preprocessor=given)
    assert type(model.data_preprocessor) is BaseDataPreprocessor


def test_weights_are_initialised_unless_they_will_be_loaded():
    assert torch.equal(build_model(dict(type="BuildTestNet")).fc.weight, torch.ones(2, 2))
    untouched = build_model(dict(type="BuildTestNet"), init_weights=False)
    assert not torch.equal(untouched.fc.weight, torch.ones(2, 2))
    module = BuildTestNet()
    assert build_model(module) is module and torch.equal(module.fc.weight, torch.ones(2, 2))


def test_anything_else_is_refused_with_what_was_expected():
    with pytest.raises(TypeError, match="nn.Module or a config dict, got <class 'str'>"):
        build_model("BuildTestNet")


class WithoutMode(BaseModel):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, inputs, data_samples=None):
        return self.fc(inputs)


class WithoutModeOwnSteps(WithoutMode):
    """Its own steps call forward as they like: no mode needed."""

    def train_step(self, data, optim_wrapper):
        return {}

    def val_step(self, data):
        return self(**data)

    test_step = val_step


class ModeInKeywords(WithoutMode):
    def forward(self, inputs, **kwargs):
        return self.fc(inputs)


def test_a_forward_without_mode_is_refused_when_the_base_steps_would_pass_it():
    with pytest.raises(
        TypeError,
        match=r"WithoutMode\.forward\(inputs, data_samples=None\) "
        r"takes no 'mode' argument, but BaseModel's train_step, val_step, "
        r"test_step call forward",
    ):
        build_model(WithoutMode())
    for model in (WithoutModeOwnSteps(), ModeInKeywords()):
        assert build_model(model) is model


def test_a_top_level_data_preprocessor_keeps_cfg_model_in_build_errors(tmp_path):
    # mmpretrain's configs set both: the error still names the model's key, not cfg.channels
    from runnerx.config import Config
    from runnerx.config.config_dict import config_key_path
    from runnerx.runner import Runner

    cfg = Config(
        dict(
            model=dict(type="DigitsConvNet", channel=(8, 16)),
            data_preprocessor=dict(type="ImgDataPreprocessor", mean=[0.5], std=[2.0]),
            work_dir=str(tmp_path),
        )
    )
    with pytest.raises(TypeError, match=r"^while building cfg\.model \(type='DigitsConvNet'"):
        Runner.from_cfg(cfg)
    cfg.model.pop("channel")
    runner = Runner.from_cfg(cfg)
    assert runner.model.data_preprocessor.std.flatten().tolist() == [2.0]
    assert config_key_path(cfg.data_preprocessor) == "data_preprocessor"  # the config's own
