"""runnerx.utils.dl_utils: MMEngine's dl_utils results, without mmcv."""

import inspect
import logging
import os
import sys

import mmengine.utils.dl_utils as mm
import numpy as np
import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

import runnerx.logging.logger as logger_module
import runnerx.utils.dl_utils as rx
from runnerx.checkpoint.safe_load import UnsafeCheckpointError
from runnerx.utils import digit_version


def test_every_name_of_mmengine_dl_utils_is_here():
    assert set(mm.__all__) <= set(rx.__all__)
    assert rx.TORCH_VERSION == torch.__version__ == mm.TORCH_VERSION
    assert digit_version(rx.TORCH_VERSION) >= digit_version("2.4")


def test_torch_version_compares_as_a_version_not_as_characters():
    # '2.13' >= '2.4' is False character by character; MMEngine compares versions.
    assert rx.TORCH_VERSION >= "2.4" and rx.TORCH_VERSION >= (2, 4)
    assert rx.TORCH_VERSION < "100.0"


MODELS = {
    "bn": nn.BatchNorm2d(3),
    "nested_bn": nn.Sequential(nn.Conv2d(1, 3, 1), nn.Sequential(nn.ReLU(), nn.BatchNorm1d(3))),
    "sync_bn": nn.SyncBatchNorm(3),
    "gn": nn.GroupNorm(1, 3),
    "ln": nn.LayerNorm(3),
    "in": nn.InstanceNorm2d(3),
    "conv": nn.Conv2d(1, 1, 1),
    "plain": nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2)),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_norm_checks_agree_with_mmengine(name):
    model = MODELS[name]
    assert rx.has_batch_norm(model) == mm.has_batch_norm(model)
    for exclude in (None, nn.LayerNorm, (nn.GroupNorm, nn.BatchNorm2d)):
        assert rx.is_norm(model, exclude) == mm.is_norm(model, exclude)
    with pytest.raises(TypeError, match="exclude must be"):
        rx.is_norm(model, exclude=("LayerNorm",))


@pytest.mark.parametrize("to_bgr", [True, False])
def test_tensor2imgs_agrees_with_mmengine(to_bgr):
    images = torch.randn(2, 3, 4, 5)
    mean, std = (1.0, 2.0, 3.0), (0.5, 0.25, 2.0)
    ours = rx.tensor2imgs(images, mean, std, to_bgr=to_bgr)
    theirs = mm.tensor2imgs(images, mean, std, to_bgr=to_bgr)
    assert len(ours) == 2
    for mine, other in zip(ours, theirs, strict=True):
        assert mine.shape == (4, 5, 3) and mine.flags.c_contiguous
        np.testing.assert_array_equal(mine, other)
    gray = torch.rand(1, 1, 2, 2)
    np.testing.assert_array_equal(
        rx.tensor2imgs(gray, to_bgr=False)[0], mm.tensor2imgs(gray, to_bgr=False)[0]
    )
    with pytest.raises(ValueError, match="to_bgr=True needs 3-channel"):
        rx.tensor2imgs(gray)
    with pytest.raises(ValueError, match="mean and std need 3 values"):
        rx.tensor2imgs(images, mean=(1.0,))


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated")
def test_meshgrid_tracing_and_mmcv_check():
    a, b = torch.arange(3), torch.arange(2)
    for ours, theirs in zip(rx.torch_meshgrid(a, b), mm.torch_meshgrid(a, b), strict=True):
        assert torch.equal(ours, theirs) and ours.shape == (3, 2)
    assert rx.is_jit_tracing() is False
    seen = []

    def record(x):
        seen.append(rx.is_jit_tracing())
        return x * 2

    torch.jit.trace(record, torch.ones(1), check_trace=False)
    assert seen == [True]
    assert rx.mmcv_full_available() == mm.mmcv_full_available()


def test_collect_env_has_mmengine_keys_and_runnerx():
    from runnerx.version import __version__

    env = rx.collect_env()
    for key in ("sys.platform", "Python", "CUDA available", "GCC", "PyTorch", "numpy_random_seed"):
        assert key in env
    assert env["PyTorch"] == torch.__version__ and env["runnerx"] == __version__
    assert env["CUDA available"] == torch.cuda.is_available()
    assert "PyTorch built with" in env["PyTorch compiling details"]


def test_collect_env_reports_an_optional_package_that_does_not_import(monkeypatch):
    class BrokenFinder:  # torchvision installed for another torch: its import raises
        def find_spec(self, name, path=None, target=None):
            if name == "torchvision":
                raise RuntimeError("operator torchvision::nms does not exist")

    monkeypatch.delitem(sys.modules, "torchvision", raising=False)
    monkeypatch.setattr(sys, "meta_path", [BrokenFinder(), *sys.meta_path])
    env = rx.collect_env()
    assert env["TorchVision"] == (
        "does not import (RuntimeError: operator torchvision::nms does not exist)"
    )
    assert env["PyTorch"] == torch.__version__


@pytest.fixture
def restore_start_method():
    method = mp.get_start_method(allow_none=True)
    yield
    mp.set_start_method(method, force=True)


def test_set_multi_processing(monkeypatch, restore_start_method):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    mp.set_start_method("fork", force=True)
    with pytest.warns(UserWarning, match="OMP_NUM_THREADS is not set"):
        rx.set_multi_processing("fork", distributed=True)
    assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "4"
    with pytest.warns(UserWarning, match="start method 'fork' set before is replaced by"):
        rx.set_multi_processing("spawn")
    assert mp.get_start_method() == "spawn"


def test_set_multi_processing_defaults_are_mmengines():
    from runnerx.utils.dl_utils.setup_env import MP_CFG_DEFAULTS

    def defaults(function):
        parameters = inspect.signature(function).parameters.values()
        return {p.name: p.default for p in parameters if p.name != "distributed"}

    assert defaults(rx.set_multi_processing) == defaults(mm.set_multi_processing)
    assert defaults(rx.set_multi_processing) == MP_CFG_DEFAULTS


def test_time_counter_logs_averages_after_warm_up(caplog, monkeypatch):
    logger = logging.getLogger("utils_time_counter_test")
    monkeypatch.setattr(logger_module, "_current_logger", logger)
    monkeypatch.setattr(rx.TimeCounter, "instance_dict", {})
    ticks = iter(range(0, 100, 1))
    monkeypatch.setattr(rx.time_counter.time, "perf_counter", lambda: next(ticks) / 100)

    @rx.TimeCounter(log_interval=2, warmup_interval=2)
    def work(x):
        return x + 1

    with caplog.at_level(logging.INFO, logger="utils_time_counter_test"):
        assert [work(i) for i in range(4)] == [1, 2, 3, 4]
        with rx.TimeCounter(tag="block"):
            pass
    messages = [record.getMessage() for record in caplog.records]
    assert messages == [
        "[work]-time per run averaged in the past 2 runs: 10.0 ms",
        "[work]-time per run averaged in the past 4 runs: 10.0 ms",
        "[block]-time per run averaged in the past 1 runs: 10.0 ms",
    ]
    assert rx.TimeCounter(tag="block") is rx.TimeCounter(tag="block")
    with pytest.raises(ValueError, match="needs a tag"), rx.TimeCounter():
        pass


def test_load_url_downloads_once_and_loads_safely(tmp_path):
    source = tmp_path / "weights-abc.pth"
    torch.save({"w": torch.arange(3)}, source)
    cache = tmp_path / "cache"
    state = rx.load_url(source.as_uri(), model_dir=str(cache), progress=False)
    assert torch.equal(state["w"], torch.arange(3))
    assert (cache / "weights-abc.pth").is_file()
    source.unlink()  # loaded from the cache now
    again = rx.load_url(source.as_uri(), model_dir=str(cache), file_name="weights-abc.pth")
    assert torch.equal(again["w"], torch.arange(3))


class Pickled:
    """A class of the test module: only an unsafe load may rebuild it."""


def test_load_url_takes_mmengines_weights_only(tmp_path):
    source = tmp_path / "pickled.pth"
    torch.save({"extra": Pickled()}, source)
    cache = str(tmp_path / "cache")
    with pytest.raises(UnsafeCheckpointError, match="Pickled"):
        rx.load_url(source.as_uri(), model_dir=cache, progress=False, weights_only=True)
    loaded = rx.load_url(source.as_uri(), model_dir=cache, weights_only=False)
    assert isinstance(loaded["extra"], Pickled)
    with pytest.raises(ValueError, match="contradict"):
        rx.load_url(source.as_uri(), model_dir=cache, weights_only=True, unsafe_load=True)


def test_load_url_checks_the_hash_in_the_file_name_and_caches_nothing_wrong(tmp_path):
    import hashlib

    source = tmp_path / "weights.pth"
    torch.save({"w": torch.arange(3)}, source)
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    cache = tmp_path / "cache"
    good = rx.load_url(
        source.as_uri(), model_dir=str(cache), check_hash=True, file_name=f"w-{digest[:8]}.pth"
    )
    assert torch.equal(good["w"], torch.arange(3))
    with pytest.raises(RuntimeError, match=r"does not match the hash in its name: .*deadbeef"):
        rx.load_url(
            source.as_uri(), model_dir=str(cache), check_hash=True, file_name="w-deadbeef.pth"
        )
    assert sorted(path.name for path in cache.iterdir()) == [f"w-{digest[:8]}.pth"]
