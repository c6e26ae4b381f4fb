"""runnerx.parallel.speed: env_cfg's speed switches, which leave cuDNN benchmarking off while
deterministic cuDNN is asked for."""

import pytest
import torch

from runnerx.parallel import apply_speed_switches


@pytest.fixture
def cudnn_flags(monkeypatch):
    for flag in ("benchmark", "deterministic"):
        monkeypatch.setattr(torch.backends.cudnn, flag, getattr(torch.backends.cudnn, flag))


@pytest.mark.parametrize("deterministic", [False, True])
def test_cudnn_benchmark_is_turned_on_unless_cudnn_is_deterministic(cudnn_flags, deterministic):
    torch.backends.cudnn.deterministic = deterministic
    torch.backends.cudnn.benchmark = False
    apply_speed_switches(dict(cudnn_benchmark=True))
    assert torch.backends.cudnn.benchmark is not deterministic
