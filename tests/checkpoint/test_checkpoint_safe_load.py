"""Safe loading: what runnerx writes loads with weights_only; any other pickled object is
refused by name, runs nothing, and loads only with the unsafe_load opt-in."""

from __future__ import annotations

import collections
import errno
import os
import pickle
import random
import sys

import numpy as np
import pytest
import torch

from runnerx.checkpoint import UnsafeCheckpointError, load_checkpoint, save_checkpoint
from runnerx.config import ConfigDict


class CreatesMarkerWhenUnpickled:
    """Unpickling this calls ``eval`` on code that creates ``marker`` (a stand-in for what a
    malicious checkpoint could run)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return eval, (f"open({self.marker!r}, 'w').close() or 'ran'",)


def test_a_malicious_pickle_runs_nothing_and_its_object_is_named(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "evil.pth"
    save_checkpoint({"state_dict": {}, "payload": CreatesMarkerWhenUnpickled(str(marker))}, path)
    with pytest.raises(UnsafeCheckpointError) as caught:
        load_checkpoint(path)
    assert not marker.exists()
    assert caught.value.names == ["builtins.eval"]
    message = str(caught.value)
    assert "builtins.eval" in message and "Nothing in it was run" in message
    assert "unsafe_load=True" in message and "--unsafe-load" in message

    assert load_checkpoint(path, unsafe_load=True)["payload"] == "ran"
    assert marker.exists()


def test_a_custom_class_is_named_by_its_module_path(tmp_path, monkeypatch):
    (tmp_path / "user_objects.py").write_text(
        "class Tracked:\n    def __init__(self, value):\n        self.value = value\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import user_objects

    path = tmp_path / "custom.pth"
    save_checkpoint({"meta": {"extra": user_objects.Tracked(3)}}, path)
    with pytest.raises(UnsafeCheckpointError, match=r"user_objects\.Tracked"):
        load_checkpoint(path)
    assert load_checkpoint(path, unsafe_load=True)["meta"]["extra"].value == 3
    # one trusted class can be allowed without unpickling everything
    with torch.serialization.safe_globals([user_objects.Tracked]):
        assert load_checkpoint(path)["meta"]["extra"].value == 3
    sys.modules.pop("user_objects")


def test_getattr_is_allowed_only_for_mmengine_history_buffers(tmp_path):
    class FetchesAttribute:
        def __reduce__(self):
            return getattr, (collections.OrderedDict, "fromkeys")

    path = tmp_path / "getattr.pth"
    save_checkpoint({"x": FetchesAttribute()}, path)
    with pytest.raises(UnsafeCheckpointError, match="getattr"):
        load_checkpoint(path)


def test_what_runnerx_puts_in_checkpoints_loads_safely(tmp_path):
    np_rng = np.random.RandomState(3)
    checkpoint = {
        "state_dict": {"w": torch.randn(3, 2, dtype=torch.bfloat16)},
        "meta": {
            "rng": {
                "python": random.Random(1).getstate(),
                "numpy": np_rng.get_state(),
                "numpy_generator": np.random.default_rng(2).bit_generator.state,
                "torch": torch.get_rng_state(),
            },
            "cfg": ConfigDict(model=dict(type="Net", channels=(16, 32))),
        },
        "message_hub": {
            "runtime_info": {"eta": np.float64(1.5), "hist": np.arange(4), "ok": np.bool_(True)},
            "log_scalars": {},
        },
    }
    path = tmp_path / "state.pth"
    save_checkpoint(checkpoint, path)
    loaded = load_checkpoint(path)
    assert torch.equal(loaded["state_dict"]["w"], checkpoint["state_dict"]["w"])
    assert loaded["meta"]["rng"]["python"] == checkpoint["meta"]["rng"]["python"]
    restored = np.random.RandomState()
    restored.set_state(loaded["meta"]["rng"]["numpy"])
    assert restored.randint(1000) == np_rng.randint(1000)
    assert loaded["meta"]["rng"]["numpy_generator"] == checkpoint["meta"]["rng"]["numpy_generator"]
    assert isinstance(loaded["meta"]["cfg"], ConfigDict)
    assert loaded["meta"]["cfg"].model.channels == (16, 32)
    info = loaded["message_hub"]["runtime_info"]
    assert info["eta"] == 1.5 and list(info["hist"]) == [0, 1, 2, 3] and info["ok"]


def test_a_trained_runners_checkpoint_loads_safely(make_runner):
    runner = make_runner(
        {"interval": 1},
        max_epochs=1,
        scores=[0.5],
        custom_hooks=[{"type": "EMAHook", "momentum": 0.5}],
        param_scheduler=[{"type": "LinearLR", "start_factor": 0.5, "by_epoch": False, "end": 2}],
    )
    runner.train()
    checkpoint = load_checkpoint(os.path.join(runner.work_dir, "epoch_1.pth"))
    assert {"meta", "state_dict", "ema_state_dict", "optimizer", "param_schedulers"} <= set(
        checkpoint
    )
    assert checkpoint["message_hub"]["log_scalars"]["train/loss"]["values"]


def test_a_torn_file_is_reported_as_incomplete(tmp_path):
    path = tmp_path / "whole.pth"
    save_checkpoint({"w": torch.zeros(1000)}, path)
    whole = path.read_bytes()
    # cut in half, torch's reader finds no central directory (a RuntimeError); cut near its
    # end, the directory points past the end and it raises a bare OSError EINVAL
    for kept in (len(whole) // 2, len(whole) - 10):
        torn = tmp_path / "torn.pth"
        torn.write_bytes(whole[:kept])
        for unsafe in (False, True):
            with pytest.raises(RuntimeError, match=f"{torn} is not a complete checkpoint"):
                load_checkpoint(torn, unsafe_load=unsafe)
    with pytest.raises(RuntimeError) as caught:
        load_checkpoint(torn)
    assert isinstance(caught.value.__cause__, OSError)  # torch's own error stays chained
    assert caught.value.__cause__.errno == errno.EINVAL
    with pytest.raises(FileNotFoundError, match="missing.pth"):
        load_checkpoint(tmp_path / "missing.pth")


def test_an_io_error_while_reading_names_the_file_and_keeps_its_errno(tmp_path, monkeypatch):
    path = tmp_path / "whole.pth"
    save_checkpoint({"w": torch.zeros(10)}, path)

    def failing_load(*args, **kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(torch, "load", failing_load)
    with pytest.raises(OSError) as caught:
        load_checkpoint(path)
    assert caught.value.errno == errno.EIO and caught.value.filename == str(path)
    assert "is not a complete checkpoint" not in str(caught.value)


def test_files_torch_save_did_not_write_are_named_as_such(tmp_path):
    (tmp_path / "notes.txt").write_text("epoch 3: 98.3 %\n")
    (tmp_path / "empty.pth").write_bytes(b"")
    (tmp_path / "bare.pkl").write_bytes(pickle.dumps({"w": 1}))
    for name, what in [("notes.txt", "starts with b'epoch 3"), ("empty.pth", "it is empty")]:
        for unsafe in (False, True):
            with pytest.raises(ValueError, match=f"{name} is not a checkpoint: .*{what}"):
                load_checkpoint(tmp_path / name, unsafe_load=unsafe)
    with pytest.raises(ValueError, match=r"bare.pkl is not a checkpoint: torch.save writes a zip"):
        load_checkpoint(tmp_path / "bare.pkl")
    # torch's format before 1.6 (not a zip archive) still loads
    torch.save({"w": torch.ones(2)}, tmp_path / "legacy.pth", _use_new_zipfile_serialization=False)
    assert torch.equal(load_checkpoint(tmp_path / "legacy.pth")["w"], torch.ones(2))


class Opaque:
    """An object a safe load must not rebuild (a trusted checkpoint's extra)."""


def test_a_runs_unsafe_load_reaches_load_from_and_resume(make_runner):
    trained = make_runner(max_epochs=1)
    trained.train()
    source = os.path.join(trained.work_dir, "epoch_1.pth")
    checkpoint = torch.load(source, weights_only=False)
    checkpoint["extra"] = Opaque()
    trusted = os.path.join(trained.work_dir, "trusted.pth")
    torch.save(checkpoint, trusted)
    weights = trained.model.state_dict()

    with pytest.raises(UnsafeCheckpointError, match="Opaque"):
        refused = make_runner(max_epochs=1, work_dir=f"{trained.work_dir}_no", load_from=trusted)
        refused.load_or_resume()
    for resume in (False, True):
        runner = make_runner(
            max_epochs=2,
            work_dir=f"{trained.work_dir}_{resume}",
            load_from=trusted,
            resume=resume,
            unsafe_load=True,
        )
        runner.load_or_resume()
        assert runner.iter == (checkpoint["meta"]["iter"] if resume else 0)
        for key, value in weights.items():
            assert torch.equal(runner.model.state_dict()[key], value)
