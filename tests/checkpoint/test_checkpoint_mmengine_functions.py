"""mmengine.runner's checkpoint functions and CheckpointLoader, as runnerx.runner offers them:
loading into a model as MMEngine does (mmengine-lite is the oracle), http(s) names served by
a real local HTTP server, registered prefixes, and the other mmengine.runner names."""

from __future__ import annotations

import functools
import logging
import os
import socket
import urllib.error
from collections import OrderedDict

import pytest
import torch
from torch import nn

import runnerx.runner as runner_api
from runnerx.checkpoint import UnsafeCheckpointError
from runnerx.checkpoint.url_errors import CheckpointDownloadError
from runnerx.hooks import Hook
from runnerx.runner import (
    CheckpointLoader,
    Priority,
    autocast,
    get_priority,
    get_state_dict,
    load_checkpoint,
    load_state_dict,
    save_checkpoint,
    turn_on_activation_checkpointing,
    weights_to_cpu,
)

#: mmengine.runner names runnerx leaves out: OpenMMLab model-zoo look-ups (their name tables
#: ship with MMEngine and need the internet).
MODEL_ZOO = {
    "get_torchvision_models",
    "get_external_models",
    "get_mmcls_models",
    "get_deprecated_model_names",
}


def net(seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def same_weights(a: nn.Module, b: nn.Module) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_runnerx_runner_has_mmengine_runners_names():
    mmengine_runner = pytest.importorskip("mmengine.runner")
    missing = set(mmengine_runner.__all__) - set(runner_api.__all__) - MODEL_ZOO
    assert not missing, missing


def test_load_checkpoint_loads_what_mmengines_loads(tmp_path):
    mmengine_runner = pytest.importorskip("mmengine.runner")
    source = net(0)
    path = tmp_path / "epoch_1.pth"
    save_checkpoint(
        {
            "state_dict": {f"module.{k}": v for k, v in source.state_dict().items()},
            "meta": {"epoch": 1},
        },
        path,
    )
    ours, theirs = net(1), net(2)
    checkpoint = load_checkpoint(ours, str(path), map_location="cpu")
    mmengine_runner.load_checkpoint(theirs, str(path), map_location="cpu")
    assert checkpoint["meta"] == {"epoch": 1}
    assert same_weights(ours, source) and same_weights(theirs, source)


def test_load_checkpoint_revises_keys_and_is_strict_only_when_asked(tmp_path, caplog):
    source = net(0)
    state = {f"backbone.{k}": v for k, v in source.state_dict().items()}
    del state["backbone.2.bias"]
    path = tmp_path / "weights.pth"
    save_checkpoint(state, path)  # a bare state dict, no 'state_dict' entry
    target = net(1)
    with pytest.raises(RuntimeError, match="2.bias"):
        load_checkpoint(target, path, strict=True, revise_keys=[(r"^backbone\.", "")])
    logger = logging.getLogger("ported_code")
    load_checkpoint(target, path, logger=logger, revise_keys=[(r"^backbone\.", "")])
    assert torch.equal(target[0].weight, source[0].weight)
    assert caplog.record_tuples == [
        ("ported_code", logging.WARNING, "missing keys in source state_dict: 2.bias")
    ]


def test_load_checkpoint_stays_safe(tmp_path):
    path = tmp_path / "evil.pth"
    torch.save({"state_dict": net(0).state_dict(), "payload": functools.partial(print)}, path)
    with pytest.raises(UnsafeCheckpointError):
        load_checkpoint(net(1), path)


def test_load_state_dict_and_get_state_dict_see_through_wrappers():
    source, target = net(0), torch.compile(net(1))  # compiles lazily: nothing runs here
    state = get_state_dict(target)
    assert list(state) == list(source.state_dict())  # no '_orig_mod.' in front
    load_state_dict(target, source.state_dict(), strict=True)
    assert same_weights(target._orig_mod, source)
    destination = {"other": 1}
    assert get_state_dict(source, destination, prefix="model.") is destination
    assert set(destination) == {"other"} | {f"model.{k}" for k in state}


def test_weights_to_cpu_copies_and_keeps_metadata():
    state = net(0).state_dict()
    copied = weights_to_cpu(state)
    assert isinstance(copied, OrderedDict) and copied._metadata is state._metadata
    assert all(torch.equal(copied[k], state[k]) for k in state)
    copied["0.weight"] = None
    assert state["0.weight"] is not None


def wrapped_inside(levels: int) -> nn.Module:
    """A wrapped model whose submodules are wrapped ``levels`` times themselves (as
    MMSeparateDistributedDataParallel wraps each submodule of a GAN)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    for index in (0, 1):
        for _ in range(levels):
            model[index] = nn.DataParallel(model[index])
    return nn.DataParallel(model)


def plain_keys() -> list[str]:
    plain = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.Linear(3, 1))
    return list(plain.state_dict())


def test_get_state_dict_takes_out_wrapped_submodules_as_mmengine_does():
    mmengine_checkpoint = pytest.importorskip("mmengine.runner.checkpoint")
    model = wrapped_inside(levels=1)
    state, expected = get_state_dict(model), mmengine_checkpoint.get_state_dict(model)
    assert list(state) == list(expected) == plain_keys()
    assert all(torch.equal(state[k], expected[k]) for k in state)
    assert state._metadata == expected._metadata
    # a submodule wrapped twice loses both wrappers (MMEngine's keeps 'module.' of the inner)
    assert list(get_state_dict(wrapped_inside(levels=2))) == plain_keys()


def test_save_checkpoint_writes_to_the_local_backends_and_refuses_others(tmp_path):
    for name, args in [
        ("local.pth", dict(backend_args={"backend": "local"})),
        ("default.pth", dict(backend_args={})),
    ]:
        save_checkpoint({"step": 1}, tmp_path / name, **args)
    save_checkpoint({"step": 1}, tmp_path / "disk.pth", file_client_args={"backend": "disk"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["default.pth", "disk.pth", "local.pth"]
    assert torch.load(tmp_path / "disk.pth", weights_only=True) == {"step": 1}
    with pytest.raises(ValueError, match="'petrel'"):
        save_checkpoint({}, tmp_path / "x.pth", backend_args={"backend": "petrel"})
    with pytest.raises(ValueError, match="s3://"):
        save_checkpoint({}, "s3://bucket/x.pth")
    assert not (tmp_path / "x.pth").exists()


def test_http_checkpoints_download_once_into_the_hub_cache(http_server, tmp_path, monkeypatch):
    url, folder, requests = http_server
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    source = net(0)
    save_checkpoint({"state_dict": source.state_dict()}, folder / "resnet_20261121-abcd.pth")
    target = net(1)
    load_checkpoint(target, f"{url}/resnet_20261121-abcd.pth")
    assert same_weights(target, source)
    cached = tmp_path / "torch_home" / "hub" / "checkpoints" / "resnet_20261121-abcd.pth"
    assert cached.is_file()
    CheckpointLoader.load_checkpoint(f"{url}/resnet_20261121-abcd.pth")
    assert len(requests) == 1  # the second read came from the cache


def test_load_from_url_in_a_runner(http_server, tmp_path, monkeypatch, make_runner):
    url, folder, _ = http_server
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    trained = make_runner(max_epochs=1)
    trained.train()
    save_checkpoint({"state_dict": trained.model.state_dict()}, folder / "tiny.pth")
    fresh = make_runner(max_epochs=1, load_from=f"{url}/tiny.pth", work_dir=str(tmp_path / "w2"))
    fresh.load_or_resume()
    assert same_weights(fresh.model, trained.model)


def test_an_http_checkpoint_that_cannot_be_fetched_says_which_and_why(
    http_server, tmp_path, monkeypatch, make_runner
):
    url, _, _ = http_server
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    with pytest.raises(CheckpointDownloadError) as error:
        CheckpointLoader.load_checkpoint(f"{url}/gone.pth")
    assert f"downloading {url}/gone.pth failed: the server answered HTTP 404" in str(error.value)
    assert isinstance(error.value.__cause__, urllib.error.HTTPError)
    assert not list((tmp_path / "torch_home").rglob("gone.pth*"))  # no partial file cached

    closed = closed_port_url()
    runner = make_runner(max_epochs=1, load_from=closed)
    refused = r"^load_from: downloading .* refused"
    with pytest.raises(CheckpointDownloadError, match=refused) as error:
        runner.load_or_resume()
    assert closed in str(error.value)
    assert isinstance(error.value.__cause__, urllib.error.URLError)


def closed_port_url() -> str:
    with socket.socket() as unused:  # a port nothing listens on once it is closed
        unused.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{unused.getsockname()[1]}/x.pth"


def test_a_server_that_never_answers_fails_the_download_in_time(tmp_path, monkeypatch):
    from runnerx.fileio.backends import http_backend

    monkeypatch.setattr(http_backend, "URL_TIMEOUT_S", 0.5)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch_home"))
    with socket.socket() as silent:  # accepts connections (the backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/x.pth"
        with pytest.raises(CheckpointDownloadError, match="no answer in time"):
            CheckpointLoader.load_checkpoint(url)
    assert not list((tmp_path / "torch_home").rglob("x.pth*"))


def download_on_rank(rank, out_dir):
    """Both ranks of one machine load a URL that cannot be fetched: the error each gets."""
    from datetime import timedelta
    from pathlib import Path

    out_dir = Path(out_dir)
    os.environ.update(LOCAL_RANK=str(rank), TORCH_HOME=str(out_dir / "torch_home"))
    torch.distributed.init_process_group(
        "gloo", rank=rank, world_size=2, timeout=timedelta(seconds=30)
    )
    try:
        CheckpointLoader.load_checkpoint((out_dir / "url.txt").read_text())
    except Exception as error:
        return type(error).__name__, str(error)
    return None


def test_a_failed_download_on_the_first_rank_fails_the_others_instead_of_hanging(
    tmp_path, spawn_ranks
):
    (tmp_path / "url.txt").write_text(closed_port_url())
    first, second = spawn_ranks(download_on_rank, tmp_path, 2, timeout=60)
    assert first[0] == "CheckpointDownloadError" and "refused" in first[1]
    assert second[0] == "RuntimeError" and "failed on another rank" in second[1]


def test_registered_prefixes_and_unknown_ones():
    calls = []

    @CheckpointLoader.register_scheme(prefixes="mydisk://")
    def load_from_mydisk(filename, map_location):
        calls.append((filename, map_location))
        return {"state_dict": {}}

    try:
        assert CheckpointLoader.load_checkpoint("mydisk://a.pth", "cpu") == {"state_dict": {}}
        assert calls == [("mydisk://a.pth", "cpu")]
        with pytest.raises(KeyError, match="force=True"):
            CheckpointLoader.register_scheme("mydisk://", load_from_mydisk)
        CheckpointLoader.register_scheme("mydisk://", lambda f, m: "replaced", force=True)
        assert CheckpointLoader.load_checkpoint("mydisk://a.pth") == "replaced"
    finally:
        CheckpointLoader._schemes.pop("mydisk://")
    with pytest.raises(ValueError, match=r"no checkpoint reader for pavi://"):
        CheckpointLoader.load_checkpoint("pavi://model.pth")


def test_priority_enum_matches_mmengines_and_orders_hooks(make_runner):
    mmengine_runner = pytest.importorskip("mmengine.runner")
    assert {p.name: p.value for p in Priority} == {
        p.name: p.value for p in mmengine_runner.Priority
    }
    assert get_priority(Priority.LOW) == 70 and type(get_priority(Priority.LOW)) is int

    class First(Hook):
        priority = Priority.HIGHEST

    class Last(Hook):
        priority = Priority.LOWEST

    runner = make_runner(custom_hooks=[Last(), First()])
    assert type(runner.hooks[0]) is First and type(runner.hooks[-1]) is Last


def test_autocast_defaults_to_the_devices_autocast_dtype():
    a = torch.randn(4, 4)
    with autocast():
        assert torch.mm(a, a).dtype == torch.bfloat16  # CPU's default
    with autocast(enabled=False):
        assert torch.mm(a, a).dtype == torch.float32
    with autocast(device_type="cpu", dtype=torch.float16):
        assert torch.mm(a, a).dtype == torch.float16


def test_turn_on_activation_checkpointing_by_attribute_path():
    plain, checkpointed = net(0), net(0)
    turn_on_activation_checkpointing(checkpointed, ["0", "2"])
    assert type(checkpointed[0]).__name__ == "CheckpointedLinear"
    x = torch.randn(5, 4)
    plain(x).sum().backward()
    checkpointed(x).sum().backward()
    assert all(
        torch.equal(p.grad, q.grad) for p, q in zip(plain.parameters(), checkpointed.parameters())
    )
    with pytest.raises(AttributeError, match="has no sub-module 'backbone'"):
        turn_on_activation_checkpointing(checkpointed, "backbone")


@pytest.mark.parametrize("prefix", ["backbone", "backbone.", "head"])
def test_load_checkpoint_with_prefix_gives_mmengines_sub_module_weights(tmp_path, prefix):
    from mmengine.runner.checkpoint import _load_checkpoint_with_prefix as theirs

    from runnerx.runner.checkpoint import _load_checkpoint_with_prefix as ours

    model = nn.Sequential()
    model.add_module("backbone", nn.Linear(3, 4))
    model.add_module("head", nn.Linear(4, 2))
    path = tmp_path / "model.pth"
    torch.save({"state_dict": model.state_dict(), "meta": {}}, path)
    got, expected = ours(prefix, str(path)), theirs(prefix, str(path))
    assert list(got) == list(expected) == ["weight", "bias"]
    assert all(torch.equal(got[key], expected[key]) for key in expected)
    sub_module = nn.Linear(3, 4) if prefix.startswith("backbone") else nn.Linear(4, 2)
    sub_module.load_state_dict(got)  # strict: every weight of the sub-module is there


def test_load_checkpoint_with_prefix_refuses_a_prefix_no_weight_has(tmp_path):
    from runnerx.runner.checkpoint import _load_checkpoint_with_prefix

    path = tmp_path / "model.pth"
    torch.save(nn.Linear(2, 2).state_dict(), path)  # a bare state dict
    with pytest.raises(AssertionError, match="starts with 'neck.'") as error:
        _load_checkpoint_with_prefix("neck", str(path))
    assert isinstance(error.value, ValueError)


def test_load_checkpoint_to_model_loads_a_read_checkpoint_as_mmengines_does():
    from mmengine.runner.checkpoint import _load_checkpoint_to_model as theirs

    from runnerx.runner.checkpoint import _load_checkpoint_to_model as ours

    source = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    wrapped = {f"module.{key}": value for key, value in source.state_dict().items()}  # DDP's
    for checkpoint in ({"state_dict": wrapped, "meta": {"epoch": 3}}, dict(wrapped)):
        mine, reference = (
            nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)),
            nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2)),
        )
        assert ours(mine, checkpoint) is checkpoint and theirs(reference, checkpoint) is checkpoint
        for key, value in source.state_dict().items():
            assert torch.equal(mine.state_dict()[key], value)
            assert torch.equal(reference.state_dict()[key], value)
    with pytest.raises(RuntimeError, match=r"Missing key\(s\).*\"2.weight\""):  # strict
        ours(nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2), nn.Linear(2, 1)), wrapped, strict=True)


def test_find_latest_checkpoint_takes_mmengines_keyword(tmp_path):
    assert runner_api.find_latest_checkpoint(path=str(tmp_path)) is None
    (tmp_path / "epoch_2.pth").write_bytes(b"")
    (tmp_path / "last_checkpoint").write_text(str(tmp_path / "epoch_2.pth"))
    assert runner_api.find_latest_checkpoint(path=str(tmp_path)) == str(tmp_path / "epoch_2.pth")
