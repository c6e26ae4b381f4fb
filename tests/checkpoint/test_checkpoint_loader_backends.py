"""CheckpointLoader reads names whose URI prefix a registered storage backend serves: through
the backend's get_local_path when it has one, else its get into memory, then safely as a local
file; readers registered with register_scheme go first, http(s) keep their cached download."""

from __future__ import annotations

import contextlib
import io
import os
import tempfile

import pytest
import torch
from torch import nn

from runnerx.checkpoint import UnsafeCheckpointError
from runnerx.checkpoint.loader import CheckpointLoader, load_from_http
from runnerx.fileio import BaseStorageBackend, register_backend
from runnerx.model import BaseModule
from runnerx.runner import load_checkpoint


class MemoryStore(BaseStorageBackend):
    """Bytes in a dict, by key; it has get (and get_text) only, as a bare object store."""

    files: dict[str, bytes] = {}
    reads: list[tuple[str, str]] = []

    def get(self, filepath):
        self.reads.append(("get", str(filepath)))
        return self.files[str(filepath)]

    def get_text(self, filepath, encoding="utf-8"):
        return self.get(filepath).decode(encoding)


class DownloadingStore(MemoryStore):
    """A store whose client downloads to a temporary file (get_local_path)."""

    @contextlib.contextmanager
    def get_local_path(self, filepath):
        self.reads.append(("get_local_path", str(filepath)))
        handle, path = tempfile.mkstemp(suffix=".pth")
        with os.fdopen(handle, "wb") as file:
            file.write(self.files[str(filepath)])
        try:
            yield path
        finally:
            os.unlink(path)


class Net(BaseModule):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        self.linear = nn.Linear(3, 2)


class Opaque:
    """An object a safe load must not rebuild."""


def saved(obj) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


@pytest.fixture
def stores(restore_backends, monkeypatch):
    """MemoryStore for mem://, DownloadingStore for dl://; no files, no reads recorded; the
    registered readers left as found."""
    monkeypatch.setattr(MemoryStore, "files", {})
    monkeypatch.setattr(MemoryStore, "reads", [])
    monkeypatch.setattr(CheckpointLoader, "_schemes", dict(CheckpointLoader._schemes))
    register_backend("memory", MemoryStore, prefixes="mem")
    register_backend("downloading", DownloadingStore, prefixes="dl")
    return MemoryStore


@pytest.fixture
def weights():
    torch.manual_seed(0)
    return Net().state_dict()


@pytest.mark.parametrize(("prefix", "read"), [("mem", "get"), ("dl", "get_local_path")])
def test_a_registered_prefix_is_read_through_its_backend(stores, weights, prefix, read):
    name = f"{prefix}://zoo/net.pth"
    stores.files[name] = saved({"state_dict": weights, "meta": {"epoch": 3}})
    checkpoint = CheckpointLoader.load_checkpoint(name, map_location="cpu")
    assert checkpoint["meta"] == {"epoch": 3}
    for key, value in weights.items():
        assert torch.equal(checkpoint["state_dict"][key], value)
    assert stores.reads == [(read, name)]


@pytest.mark.parametrize("prefix", ["mem", "dl"])
def test_a_checkpoint_from_a_backend_is_loaded_safely(stores, prefix):
    name = f"{prefix}://zoo/evil.pth"
    stores.files[name] = saved({"state_dict": {}, "payload": Opaque()})
    with pytest.raises(UnsafeCheckpointError, match="Opaque") as caught:
        CheckpointLoader.load_checkpoint(name)
    if prefix == "mem":  # read from memory: the error names the URI, not a buffer
        assert f"refused to load the checkpoint {name}:" in str(caught.value)
    # the opt-in of a run (unsafe_load) reaches runnerx's readers, stores included
    loaded = CheckpointLoader.load_checkpoint(name, unsafe_load=True)
    assert isinstance(loaded["payload"], Opaque)


def test_truncated_bytes_from_a_backend_are_named(stores, weights):
    stores.files["mem://zoo/cut.pth"] = saved(weights)[:100]
    with pytest.raises(RuntimeError, match="mem://zoo/cut.pth is not a complete checkpoint"):
        CheckpointLoader.load_checkpoint("mem://zoo/cut.pth")


def test_load_checkpoint_and_pretrained_init_read_a_backend(stores, weights):
    stores.files["mem://zoo/net.pth"] = saved({"state_dict": weights})
    model = Net()
    load_checkpoint(model, "mem://zoo/net.pth", strict=True)
    pretrained = Net(init_cfg=dict(type="Pretrained", checkpoint="mem://zoo/net.pth"))
    pretrained.init_weights()
    for loaded in (model, pretrained):
        for key, value in loaded.state_dict().items():
            assert torch.equal(value, weights[key]), key


def test_a_registered_reader_goes_before_the_backend(stores, weights):
    stores.files["mem://zoo/net.pth"] = saved(weights)

    @CheckpointLoader.register_scheme(prefixes="mem://zoo/")
    def read_zoo(filename, map_location):
        return {"read_by": "scheme", "filename": filename}

    assert CheckpointLoader.load_checkpoint("mem://zoo/net.pth")["read_by"] == "scheme"
    assert stores.reads == []
    assert CheckpointLoader._get_checkpoint_loader("https://host/a.pth") is load_from_http


def test_a_prefix_without_reader_or_backend_says_both_ways_to_fix_it(stores):
    with pytest.raises(ValueError, match=r"no checkpoint reader for gs:// \(gs://b/a.pth\)") as e:
        CheckpointLoader.load_checkpoint("gs://b/a.pth")
    message = str(e.value)
    assert "register_backend('name', MyBackend, prefixes='gs')" in message
    assert "CheckpointLoader.register_scheme(prefixes='gs://'" in message
    assert "'mem'" in message  # the prefixes it does read
