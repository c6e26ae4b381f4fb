"""The -O presets of tools/train.py as config changes."""

import pytest
import torch
from torch import nn

from runnerx import Config
from runnerx.optim import build_optim_wrapper
from runnerx.parallel import optimization_level_changes


def make_cfg(**extra):
    return Config(
        dict(optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)), env_cfg=dict(), **extra)
    )


AMP_BF16 = dict(
    optimizer=dict(type="SGD", lr=0.1),
    type="AmpOptimWrapper",
    loss_scale="dynamic",
    dtype="bfloat16",
)


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (0, {}),
        (1, {"env_cfg.matmul_precision": "high"}),
        (2, {"env_cfg.matmul_precision": "high", "optim_wrapper": AMP_BF16}),
        (3, {"env_cfg.matmul_precision": "high", "optim_wrapper": AMP_BF16, "compile": True}),
    ],
)
def test_each_level_adds_its_changes(level, expected):
    cfg = make_cfg()
    changes = optimization_level_changes(cfg, level)
    assert changes == expected
    assert cfg.optim_wrapper.get("type") is None  # the config itself is left as it was
    cfg.merge_from_dict(changes, source=f"-O{level}")
    if level >= 2:
        assert cfg.optim_wrapper.type == "AmpOptimWrapper" and cfg.optim_wrapper.dtype == "bfloat16"


def test_level_three_keeps_a_compile_dict_of_the_config():
    cfg = make_cfg(compile=dict(mode="max-autotune"))
    assert "compile" not in optimization_level_changes(cfg, 3)


def test_bad_levels_and_wrappers_are_refused():
    with pytest.raises(ValueError, match="-O takes a level of 0, 1, 2 or 3"):
        optimization_level_changes(make_cfg(), 4)
    cfg = Config(dict(optim_wrapper=dict(type="MyWrapper", optimizer=dict(type="SGD", lr=0.1))))
    with pytest.raises(ValueError, match="-O2 turns on bfloat16 autocast.*'MyWrapper'"):
        optimization_level_changes(cfg, 2)


def test_level_two_keeps_an_amp_dtype_the_config_sets():
    cfg = make_cfg()
    cfg.optim_wrapper.update(type="AmpOptimWrapper", dtype="float16")
    cfg.merge_from_dict(optimization_level_changes(cfg, 2), source="-O2")
    wrapper = build_optim_wrapper(nn.Linear(2, 2), cfg.optim_wrapper)
    assert wrapper.cast_dtype is torch.float16
    # per optimizer: a dtype set in one sub-config is kept, the other gets bfloat16
    sub = dict(optimizer=dict(type="SGD", lr=0.1))
    cfg = Config(dict(optim_wrapper=dict(gen=dict(sub, dtype="float16"), disc=dict(sub))))
    changed = optimization_level_changes(cfg, 2)["optim_wrapper"]
    assert (changed["gen"]["dtype"], changed["disc"]["dtype"]) == ("float16", "bfloat16")
