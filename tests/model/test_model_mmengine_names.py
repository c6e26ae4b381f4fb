"""mmengine.model's other names in runnerx.model: every one is there (but the wrappers runnerx
replaces), and they behave as mmengine-lite's."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import runnerx.model as rx
from runnerx.registry import MODEL_WRAPPERS, Registry

mm = pytest.importorskip("mmengine.model")

#: mmengine.model names runnerx leaves out: FSDP1 and separate-DDP wrappers (runnerx has FSDP2
#: and per-module DDP through `strategy`)
LEFT_OUT = {"MMFullyShardedDataParallel"}


def test_every_mmengine_model_name_is_there():
    assert set(mm.__all__) - set(rx.__all__) == LEFT_OUT
    for name in set(mm.__all__) - LEFT_OUT:
        assert getattr(rx, name) is not None


def test_is_model_wrapper_knows_torchs_registered_and_child_registry_wrappers():
    assert rx.is_model_wrapper(nn.DataParallel(nn.Linear(2, 2)))
    assert not rx.is_model_wrapper(nn.Linear(2, 2))
    assert mm.is_model_wrapper(nn.DataParallel(nn.Linear(2, 2)))

    child = Registry("model_wrapper", parent=MODEL_WRAPPERS, scope="wrapper_test_scope")

    @child.register_module()
    class ScopedWrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    inner = nn.Linear(2, 2)
    wrapped = ScopedWrapper(nn.DataParallel(inner))
    assert rx.is_model_wrapper(wrapped)
    assert not rx.is_model_wrapper(wrapped, registry=Registry("unrelated"))
    from runnerx.parallel import unwrap

    assert unwrap(torch.compile(wrapped)) is inner


def test_revert_sync_batchnorm_computes_what_batchnorm_does():
    torch.manual_seed(0)
    plain = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4))
    synced = rx.convert_sync_batchnorm(nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4)))
    synced.load_state_dict(plain.state_dict())
    assert isinstance(synced[1], nn.SyncBatchNorm)
    reverted = rx.revert_sync_batchnorm(synced)
    assert not isinstance(reverted[1], nn.SyncBatchNorm)
    x = torch.randn(2, 1, 6, 6)
    torch.testing.assert_close(reverted(x), plain(x))  # train mode: batch statistics
    torch.testing.assert_close(reverted[1].running_mean, plain[1].running_mean)
    with pytest.raises(ValueError, match="sync_bn"):
        rx.convert_sync_batchnorm(nn.BatchNorm2d(2), implementation="mmcv")
    # MMEngine's keyword
    assert isinstance(rx.convert_sync_batchnorm(module=nn.BatchNorm2d(2)), nn.SyncBatchNorm)


def test_merge_dict_is_mmengines():
    parts = ({"a": 1, "b": 2}, {"b": 3}, {"c": 4})
    assert rx.merge_dict(*parts) == mm.merge_dict(*parts) == {"a": 1, "b": 3, "c": 4}
    with pytest.raises(TypeError, match="argument 1 is list"):
        rx.merge_dict({}, [])


def test_detect_anomalous_params_names_the_unused_parameters():
    model = nn.ModuleDict(dict(used=nn.Linear(2, 1), unused=nn.Linear(2, 1)))
    loss = model["used"](torch.randn(3, 2)).sum()
    assert rx.detect_anomalous_params(loss, model) == ["unused.weight", "unused.bias"]
    # MMEngine's DDP wrapper (and wrappers copied from it) pass the model by keyword
    assert rx.detect_anomalous_params(loss, model=model) == ["unused.weight", "unused.bias"]
