"""The run's environment as a Runner sets it up from the config: env_cfg.dist_cfg is checked
for every launcher, env_cfg.resource_limit raises the open-files limit, and a work dir that
cannot be made is named with its cause."""

import errno
import os

import pytest
import torch.distributed as dist

from runnerx.dist.launch import check_dist_cfg
from runnerx.runner import Runner, environment


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


def test_an_existing_work_dir_that_takes_no_folder_says_so_and_how_to_test(
    digits_cfg, tmp_path, monkeypatch
):
    work = tmp_path / "run"
    work.mkdir()

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(environment.os, "makedirs", read_only)
    with pytest.raises(OSError) as caught:
        environment.make_run_dir(str(work))
    assert str(caught.value) == (
        f"work_dir '{work}' (from --work-dir or the config's work_dir) exists but takes no new "
        "folder (Read-only file system), which each run needs for its log; choose a folder you "
        "can write to (to test a checkpoint kept there, give tools/test.py the checkpoint's "
        "path and another --work-dir)"
    )


@pytest.fixture
def resource():
    """The ``resource`` module (not on Windows, where nothing is raised), with this process's
    soft limit of open files lowered to 1024 for the test (the hard limit stays)."""
    resource = pytest.importorskip("resource")
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before[1] != resource.RLIM_INFINITY and before[1] < 8192:
        pytest.skip(f"the hard limit of open files ({before[1]}) is too low to raise to")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, before[1]))
    yield resource
    resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_the_open_files_limit_is_raised_as_mmengine_raises_it(digits_cfg, resource):
    def soft_limit():
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]

    digits_cfg.env_cfg = dict(resource_limit=2048)
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 2048
    digits_cfg.env_cfg = dict(resource_limit=1500)  # never lowered
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 2048
    digits_cfg.env_cfg = dict()
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 4096  # MMEngine's default
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY:  # never past the hard limit
        environment.raise_open_files_limit(hard + 1)
        assert soft_limit() == hard


def test_a_bad_resource_limit_is_an_error_naming_the_key(digits_cfg):
    digits_cfg.env_cfg = dict(resource_limit="4096")
    with pytest.raises(ValueError, match=r"env_cfg\.resource_limit must be an int >= 0"):
        Runner.from_cfg(digits_cfg)
