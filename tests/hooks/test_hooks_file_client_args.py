"""CheckpointHook and LoggerHook take MMEngine's deprecated ``file_client_args`` as MMEngine
0.10.7 does (accepted where MMEngine accepts it, with its logged deprecation WARNING, refused
where it refuses it); it chooses the storage backend as ``backend_args`` does."""

import logging
from pathlib import Path

import pytest
from mmengine import hooks as mmengine_hooks

from runnerx import Config
from runnerx.fileio import paths
from runnerx.hooks import CheckpointHook, LoggerHook
from runnerx.logging import logger as logger_module
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]
DISK = dict(backend="disk")
DEPRECATED = '"file_client_args" will be deprecated in future. Please use "backend_args" instead'


@pytest.fixture
def deprecation_log(monkeypatch, logged_warnings):
    """The WARNINGs logged through the current logger, in a process that has not yet warned
    of file_client_args."""
    paths._warn_of_file_client_args.cache_clear()
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("fca"))
    yield logged_warnings("fca")
    paths._warn_of_file_client_args.cache_clear()


def both_hooks(out_dir):
    """(hook name, keyword arguments) with file_client_args, as MMEngine configs write them."""
    return [
        ("CheckpointHook", dict(interval=1, file_client_args=DISK)),
        ("LoggerHook", dict(out_dir=str(out_dir), file_client_args=DISK)),
    ]


def build(library, name, kwargs):
    """The hook ``name`` of runnerx or MMEngine built from ``kwargs``, or the error's type."""
    kind = {"CheckpointHook": CheckpointHook, "LoggerHook": LoggerHook}[name]
    if library == "mmengine":
        kind = getattr(mmengine_hooks, name)
    try:
        return kind(**kwargs)
    except (TypeError, ValueError) as error:
        return type(error)


@pytest.mark.parametrize("index", [0, 1], ids=["CheckpointHook", "LoggerHook"])
def test_file_client_args_is_accepted_with_a_logged_warning_as_in_mmengine(
    tmp_path, index, deprecation_log
):
    name, kwargs = both_hooks(tmp_path)[index]
    assert isinstance(build("mmengine", name, kwargs), getattr(mmengine_hooks, name))
    deprecation_log.clear()
    hook = build("runnerx", name, kwargs)
    assert type(hook).__name__ == name
    assert deprecation_log == [DEPRECATED]
    build("runnerx", name, kwargs)
    assert deprecation_log == [DEPRECATED]  # once per process


def test_the_file_functions_log_the_same_warning(tmp_path, deprecation_log):
    from runnerx.fileio import dump, load

    dump({"a": 1}, tmp_path / "a.json", file_client_args=DISK)
    assert load(tmp_path / "a.json", file_client_args=DISK) == {"a": 1}
    assert deprecation_log == [DEPRECATED]


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("CheckpointHook", dict(file_client_args=DISK, backend_args=DISK)),
        ("LoggerHook", dict(out_dir="logs", file_client_args=DISK, backend_args=DISK)),
        ("LoggerHook", dict(file_client_args=DISK)),  # nothing to copy the logs to
    ],
    ids=["checkpoint-both", "logger-both", "logger-no-out-dir"],
)
def test_file_client_args_is_refused_where_mmengine_refuses_it(name, kwargs):
    assert build("mmengine", name, kwargs) is ValueError
    assert build("runnerx", name, kwargs) is ValueError


def test_a_config_with_file_client_args_trains_and_writes_its_files(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.work_dir = str(tmp_path / "work")
    for (name, kwargs), key in zip(both_hooks(tmp_path / "copies"), ("checkpoint", "logger")):
        cfg.default_hooks[key] = dict(type=name, **kwargs)
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert (tmp_path / "work" / "epoch_1.pth").is_file()
    assert list((tmp_path / "copies" / "work").glob("*.log"))  # the log, copied to out_dir
