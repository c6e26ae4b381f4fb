"""The run's environment as a Runner sets it up from the config: env_cfg.dist_cfg is checked
for every launcher, and a work dir that cannot be made is named with its cause."""

import pytest
import torch.distributed as dist

from runnerx.dist.launch import check_dist_cfg
from runnerx.runner import Runner


def test_a_misspelt_backend_is_refused_without_a_launcher_too(digits_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dict(backend="glooo"))
    with pytest.raises(ValueError) as caught:
        Runner.from_cfg(digits_cfg)
    message = str(caught.value)
    assert message.startswith(
        "env_cfg.dist_cfg.backend='glooo' is not a torch.distributed backend (known: gloo, nccl"
    )
    assert message.endswith("Did you mean 'gloo'? Leave it out to get nccl on CUDA, gloo on CPU")


def test_a_misspelt_dist_cfg_key_is_refused_with_a_close_match(digits_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dict(bakend="gloo"))
    with pytest.raises(KeyError, match=r"env_cfg\.dist_cfg\.bakend .* did you mean 'backend'"):
        Runner.from_cfg(digits_cfg)


@pytest.mark.parametrize(
    "dist_cfg",
    [
        dict(backend="nccl", timeout=600),  # a GPU cluster's config, run once on a CPU
        dict(backend="cpu:gloo,cuda:nccl"),  # one backend per device
        dict(backend="GLOO", port=29501, init_method="env://"),
    ],
)
def test_the_dist_cfgs_torch_takes_are_accepted(digits_cfg, dist_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dist_cfg)
    Runner.from_cfg(digits_cfg)


def test_a_backend_a_plugin_registered_is_accepted(monkeypatch):
    backend = dist.Backend
    tables = ("backend_list", "backend_type_map", "backend_capability", "_plugins")
    for table in (*tables, "default_device_backend_map"):
        monkeypatch.setattr(backend, table, type(getattr(backend, table))(getattr(backend, table)))
    monkeypatch.setattr(backend, "PLUGINCCL", None, raising=False)  # removed afterwards
    monkeypatch.delattr(backend, "PLUGINCCL")
    with pytest.raises(ValueError, match="'pluginccl' is not a torch.distributed backend"):
        check_dist_cfg(dict(backend="pluginccl"))
    backend.register_backend("pluginccl", lambda *args: None, devices=["cpu"])
    check_dist_cfg(dict(backend="pluginccl"))


def test_a_work_dir_under_a_file_is_named_with_the_file(digits_cfg, tmp_path):
    (tmp_path / "notes.txt").write_text("")
    digits_cfg.work_dir = str(tmp_path / "notes.txt" / "work")
    with pytest.raises(NotADirectoryError) as caught:
        Runner.from_cfg(digits_cfg)
    assert str(caught.value) == (
        f"work_dir '{tmp_path}/notes.txt/work' (from --work-dir or the config's work_dir) "
        f"cannot be created: '{tmp_path}/notes.txt' is a file, not a folder; choose a folder "
        "you can write to"
    )
