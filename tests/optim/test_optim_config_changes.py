"""scale_lr (auto_scale_lr's linear scaling rule) and enable_amp (tools/train.py --amp)."""

import logging

import pytest
import torch
from torch import nn

from runnerx.config import Config
from runnerx.optim import AmpOptimWrapper, build_optim_wrapper, enable_amp, scale_lr


def optim_cfg(**wrapper):
    return dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9), **wrapper)


def test_scale_lr_uses_the_real_total_batch_size(caplog):
    cfg = Config(dict(optim_wrapper=optim_cfg())).optim_wrapper
    per_device, world_size = 8, 4
    logger = logging.getLogger("test_optim_scale_lr")
    with caplog.at_level(logging.INFO, logger="test_optim_scale_lr"):
        scaled = scale_lr(
            cfg, dict(enable=True, base_batch_size=16), per_device * world_size, logger
        )
    assert scaled["optimizer"]["lr"] == pytest.approx(0.2)
    assert scaled["optimizer"]["momentum"] == 0.9
    assert cfg.optimizer.lr == 0.1  # the given config is unchanged
    assert "scaled by 2" in caplog.text and "0.1 -> 0.2" in caplog.text
    assert build_optim_wrapper(nn.Linear(2, 2), scaled).get_lr() == {"lr": [pytest.approx(0.2)]}


def test_scale_lr_for_several_optimizers():
    cfg = dict(
        generator=dict(optimizer=dict(type="Adam", lr=1e-3)),
        discriminator=dict(optimizer=dict(type="Adam", lr=4e-3)),
    )
    scaled = scale_lr(cfg, dict(enable=True, base_batch_size=64), 32)
    assert scaled["generator"]["optimizer"]["lr"] == pytest.approx(5e-4)
    assert scaled["discriminator"]["optimizer"]["lr"] == pytest.approx(2e-3)
    assert cfg["generator"]["optimizer"]["lr"] == 1e-3


def test_scale_lr_disabled_changes_nothing():
    cfg = optim_cfg()
    assert scale_lr(cfg, None, 64) is cfg
    assert scale_lr(cfg, dict(enable=False, base_batch_size=16), 64) is cfg
    assert scale_lr(cfg, dict(base_batch_size=16), 64) is cfg  # enable defaults to False


@pytest.mark.parametrize(
    ("auto_scale_lr", "message"),
    [
        (dict(enable=True), "auto_scale_lr.base_batch_size must be set"),
        (dict(enable=True, base_batch_size=0), "positive number"),
        (dict(enable=True, base_batchsize=16), "Did you mean 'base_batch_size'"),
        ("on", "auto_scale_lr must be a dict"),
    ],
)
def test_scale_lr_errors(auto_scale_lr, message):
    with pytest.raises((TypeError, ValueError), match=message):
        scale_lr(optim_cfg(), auto_scale_lr, 64)


def test_scale_lr_without_base_batch_size_is_also_mmengines_assertion_error():
    with pytest.raises(AssertionError, match="auto_scale_lr.base_batch_size must be set"):
        scale_lr(optim_cfg(), dict(enable=True), 64)


def test_scale_lr_needs_an_lr():
    with pytest.raises(ValueError, match=r"optim_wrapper.optimizer has no 'lr'"):
        scale_lr(dict(optimizer=dict(type="Adam")), dict(enable=True, base_batch_size=8), 16)


def test_enable_amp_switches_optim_wrapper():
    cfg = Config(dict(optim_wrapper=optim_cfg(type="OptimWrapper", clip_grad=None))).optim_wrapper
    amp = enable_amp(cfg)
    assert amp["type"] == "AmpOptimWrapper" and amp["loss_scale"] == "dynamic"
    assert cfg.type == "OptimWrapper" and "loss_scale" not in cfg
    wrapper = build_optim_wrapper(nn.Linear(2, 2), amp)
    assert isinstance(wrapper, AmpOptimWrapper)
    assert wrapper.cast_dtype is torch.bfloat16  # dtype=None on CPU


def test_enable_amp_keeps_an_amp_wrapper_and_sets_dtype():
    cfg = optim_cfg(type="AmpOptimWrapper", loss_scale=512.0)
    assert enable_amp(cfg) == cfg
    with_dtype = enable_amp(optim_cfg(), dtype="float16")
    assert with_dtype["dtype"] == "float16" and with_dtype["type"] == "AmpOptimWrapper"


def test_enable_amp_for_several_optimizers():
    cfg = dict(generator=optim_cfg(), discriminator=optim_cfg(type="OptimWrapper"))
    amp = enable_amp(cfg)
    assert {sub["type"] for sub in amp.values()} == {"AmpOptimWrapper"}


def test_enable_amp_errors():
    with pytest.raises(ValueError, match=r"optim_wrapper.type .*'MyWrapper'"):
        enable_amp(optim_cfg(type="MyWrapper"))
    with pytest.raises(ValueError, match="optim_wrapper.dtype='fp8'"):
        enable_amp(optim_cfg(), dtype="fp8")
