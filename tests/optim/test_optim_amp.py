"""AmpOptimWrapper on CPU: fp16 with a loss scaler (inf recovery), bf16 autocast, errors."""

import logging
import math
import warnings

import pytest
import torch
from torch import nn

from runnerx.logging import logger as logger_module
from runnerx.optim import AmpOptimWrapper, OptimWrapper


class RecordingHub:
    def __init__(self):
        self.logged = []

    def update_scalar(self, key, value, count=1):
        self.logged.append((key, value))

    def last(self, key):
        return [value for logged_key, value in self.logged if logged_key == key][-1]


def net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def amp_wrapper(model, **kwargs):
    wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1), **kwargs)
    if wrapper.message_hub is not None:
        wrapper.message_hub = RecordingHub()
    return wrapper


def train_step(wrapper, model):
    with wrapper.optim_context(model):
        loss = model(torch.randn(16, 4)).pow(2).mean()
    wrapper.update_params(loss)


def snapshot(model):
    return [p.detach().clone() for p in model.parameters()]


def changed(before, model):
    return [not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True)]


def test_fp16_autocast_on_cpu_casts_matmuls():
    model = net()
    wrapper = amp_wrapper(model, dtype="float16")
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    with wrapper.optim_context(model):
        assert (a @ b).dtype == torch.float16
    assert (a @ b).dtype == torch.float32
    assert wrapper.cast_dtype is torch.float16 and wrapper.loss_scaler is not None


def test_fp16_scaler_skips_an_inf_step_lowers_the_scale_and_carries_on():
    model = net()
    # a small initial scale: the default 2**16 overflows fp16 gradients here on its own
    wrapper = amp_wrapper(model, dtype="float16", loss_scale=dict(init_scale=256.0))
    hub = wrapper.message_hub
    inject = {"inf": False}
    model[0].weight.register_hook(lambda grad: grad * math.inf if inject["inf"] else grad)

    before = snapshot(model)
    train_step(wrapper, model)
    assert all(changed(before, model))
    scale = hub.last("train/loss_scale")
    assert isinstance(scale, torch.Tensor) and scale.item() == 256.0

    inject["inf"] = True
    before = snapshot(model)
    train_step(wrapper, model)
    assert not any(changed(before, model))  # the step was skipped
    assert hub.last("train/loss_scale").item() == 128.0
    assert wrapper.skipped_steps == 1
    assert all(p.grad is None for p in model.parameters())

    inject["inf"] = False
    before = snapshot(model)
    train_step(wrapper, model)
    assert all(changed(before, model))
    assert wrapper.skipped_steps == 1
    assert scale.item() == 256.0  # the logged value of step 1 did not change with the scaler
    skipped = hub.last("train/skipped_steps")
    assert isinstance(skipped, torch.Tensor) and skipped.item() == 1

    state = wrapper.state_dict()
    assert state["loss_scaler"]["scale"] == 128.0
    restored = amp_wrapper(net(), dtype="float16")
    restored.load_state_dict(state)
    assert restored.loss_scaler.get_scale() == 128.0
    assert "loss_scaler" in state  # load_state_dict did not change the dict it was given


def test_fixed_loss_scale_stays_after_inf():
    model = net()
    wrapper = amp_wrapper(model, dtype="float16", loss_scale=512.0)
    model[0].weight.register_hook(lambda grad: grad * math.inf)
    train_step(wrapper, model)
    assert wrapper.skipped_steps == 1
    assert wrapper.loss_scaler.get_scale() == 512.0


def test_fp16_clips_the_unscaled_gradients():
    model, reference = net(), net()
    inputs = torch.randn(16, 4)
    reference(inputs).pow(2).mean().backward()
    true_norm = torch.nn.utils.get_total_norm([p.grad for p in reference.parameters()])
    wrapper = amp_wrapper(model, dtype="float16", clip_grad=dict(max_norm=1e9))
    wrapper.update_params(model(inputs).pow(2).mean())  # no autocast: only the scaling differs
    torch.testing.assert_close(wrapper.message_hub.last("train/grad_norm"), true_norm)


def test_bf16_on_cpu_autocasts_without_a_scaler():
    model = net()
    wrapper = amp_wrapper(model)  # dtype=None on CPU means bfloat16
    assert wrapper.cast_dtype is torch.bfloat16 and wrapper.loss_scaler is None
    a, b = torch.randn(3, 3), torch.randn(3, 3)
    with wrapper.optim_context(model):
        assert (a @ b).dtype == torch.bfloat16
    assert (a @ b).dtype == torch.float32
    before = snapshot(model)
    train_step(wrapper, model)
    assert all(changed(before, model))
    assert "loss_scaler" not in wrapper.state_dict()


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (
            dict(),
            "bfloat16 on cpu (its default: optim_wrapper.dtype is not set), "
            "with no loss scaling (bfloat16 needs none)",
        ),
        (dict(dtype="float16"), "float16 on cpu, with dynamic loss scaling (GradScaler)"),
        (dict(dtype="float16", loss_scale=64), "float16 on cpu, with a fixed loss scale of 64"),
    ],
)
def test_building_logs_one_line_naming_the_dtype_device_and_loss_scaling(
    options, says, monkeypatch, caplog
):
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("amp_test"))
    with caplog.at_level(logging.INFO, logger="amp_test"):
        amp_wrapper(net(), **options)
    [record] = caplog.records
    assert record.levelno == logging.INFO
    assert record.getMessage() == (
        f"AmpOptimWrapper: mixed precision autocasts the forward pass to {says}"
    )


def test_amp_keeps_no_sync_while_accumulating():
    class WithNoSync(nn.Linear):
        entered = 0

        def no_sync(self):
            WithNoSync.entered += 1
            return torch.autocast("cpu", enabled=False)

    model = WithNoSync(2, 1)
    wrapper = amp_wrapper(model, dtype="bfloat16", accumulative_counts=2)
    with wrapper.optim_context(model):
        assert torch.is_autocast_enabled("cpu")
    assert WithNoSync.entered == 1
    assert isinstance(wrapper, OptimWrapper)


@pytest.mark.parametrize("dtype", ["fp8", "float32", torch.float32, "bf16"])
def test_unknown_dtype_names_the_key_and_the_allowed_values(dtype):
    with pytest.raises(ValueError, match="optim_wrapper.dtype") as info:
        amp_wrapper(net(), dtype=dtype)
    assert "'float16', 'bfloat16'" in str(info.value)


@pytest.mark.parametrize(
    ("loss_scale", "message"),
    [
        ("static", "optim_wrapper.loss_scale='static' is not valid"),
        (dict(init_scal=8.0), "Did you mean 'init_scale'"),
        (-1.0, "is not valid"),
    ],
)
def test_bad_loss_scale(loss_scale, message):
    with pytest.raises((TypeError, ValueError), match=message):
        amp_wrapper(net(), dtype="float16", loss_scale=loss_scale)


def test_loss_scale_dict_reaches_the_scaler():
    wrapper = amp_wrapper(net(), dtype="float16", loss_scale=dict(init_scale=1024.0))
    assert wrapper.loss_scaler.get_scale() == 1024.0


@pytest.mark.parametrize(
    ("loss_scale", "error", "message"),
    [
        ("static", TypeError, "optim_wrapper.loss_scale='static' is not valid"),
        (dict(init_scal=8.0), TypeError, "Did you mean 'init_scale'"),
        (0, TypeError, "optim_wrapper.loss_scale=0 is not valid"),
    ],
)
@pytest.mark.parametrize("dtype", ["bfloat16", None])  # None: bfloat16 on CPU
def test_bf16_refuses_the_loss_scale_fp16_refuses(dtype, loss_scale, error, message):
    with pytest.raises(error, match=message):
        amp_wrapper(net(), dtype=dtype, loss_scale=loss_scale)


@pytest.mark.parametrize("loss_scale", [128.0, dict(init_scale=8.0)])
def test_a_loss_scale_bf16_does_not_use_is_warned_about(loss_scale):
    with pytest.warns(UserWarning, match=r"optim_wrapper\.loss_scale=.* has no effect: .*bfloat16"):
        wrapper = amp_wrapper(net(), dtype="bfloat16", loss_scale=loss_scale)
    assert wrapper.loss_scaler is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        amp_wrapper(net(), dtype="bfloat16", loss_scale="dynamic")  # the default: no warning


def test_valid_dtypes_names_the_dtypes_taken_and_a_subclass_may_narrow_them():
    assert AmpOptimWrapper.valid_dtypes == ("float16", "bfloat16")

    class Bf16Only(AmpOptimWrapper):
        valid_dtypes = ("bfloat16",)

    model = net()
    Bf16Only(dtype="bfloat16", optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(ValueError, match=r"dtype='float16' is not one of Bf16Only's valid_dtypes"):
        Bf16Only(dtype="float16", optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
