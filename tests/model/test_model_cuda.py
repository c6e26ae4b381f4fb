"""On a GPU: a training step, its preprocessing and an EMA update never wait for the device."""

import pytest
import torch

from runnerx.model import DigitsConvNet, ExponentialMovingAverage

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_train_step_and_ema_update_do_not_synchronise(fake_optim_wrapper):
    model = DigitsConvNet().cuda()
    assert model.data_preprocessor.device.type == "cuda"
    wrapper = fake_optim_wrapper(model)
    ema = ExponentialMovingAverage(model, momentum=0.01)
    batch = dict(
        inputs=torch.rand(64, 1, 8, 8).pin_memory(),
        data_samples=torch.randint(0, 10, (64,)).pin_memory(),
    )
    model.train_step(batch, wrapper)  # warm-up: kernels and allocator set up
    ema.update_parameters(model)
    torch.cuda.synchronize()

    torch.cuda.set_sync_debug_mode("error")
    try:
        log_vars = model.train_step(batch, wrapper)
        ema.update_parameters(model)
        predictions = model.val_step(batch)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert log_vars["loss"].device.type == "cuda"
    assert predictions["pred_score"].shape == (64, 10)
    assert ema.steps.item() == 2
