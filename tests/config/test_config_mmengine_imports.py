"""A config that imports from ``mmengine`` (``from mmengine.hooks import IterTimerHook``, as
mmdet 3.x's pure-Python configs do) loads and trains the same whether MMEngine is installed
or not: each name is runnerx's object of that path, and MMEngine is never imported."""

import sys
import textwrap
from pathlib import Path

import pytest

from runnerx import Config
from runnerx.data import DefaultSampler
from runnerx.hooks import CheckpointHook, IterTimerHook, LoggerHook
from runnerx.optim import OptimWrapper
from runnerx.registry import HOOKS
from runnerx.runner import IterBasedTrainLoop, LogProcessor, Runner

FILES = {
    "_base_/runtime.py": """\
        from mmengine.hooks import CheckpointHook, IterTimerHook, LoggerHook
        from mmengine.runner import LogProcessor

        default_hooks = dict(
            timer=dict(type=IterTimerHook),
            logger=dict(type=LoggerHook, interval=1),
            checkpoint=dict(type=CheckpointHook, interval=2, by_epoch=False),
        )
        log_processor = dict(type=LogProcessor, window_size=1, by_epoch=False)
        """,
    "toy.py": """\
        from mmengine.config import read_base

        with read_base():
            from ._base_.runtime import *
        from mmengine.dataset.sampler import DefaultSampler
        from mmengine.optim.optimizer.optimizer_wrapper import OptimWrapper
        from mmengine.runner.loops import IterBasedTrainLoop
        from torch.optim import SGD

        from runnerx.testing.toy import ToyDataset, ToyModel

        model = dict(type=ToyModel)
        train_dataloader = dict(
            dataset=dict(type=ToyDataset),
            sampler=dict(type=DefaultSampler, shuffle=True),
            batch_size=3,
            num_workers=0,
        )
        optim_wrapper = dict(type=OptimWrapper, optimizer=dict(type=SGD, lr=0.1))
        train_cfg = dict(type=IterBasedTrainLoop, max_iters=2)
        work_dir = '{{ fileDirname }}/work'
        """,
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return root


def block_mmengine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every import of mmengine fail, as where it is not installed."""
    for name in [name for name in sys.modules if name.partition(".")[0] == "mmengine"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "mmengine", None)


@pytest.fixture(params=["installed", "not installed"])
def mmengine(request, monkeypatch):
    """Whether mmengine can be imported."""
    if request.param == "not installed":
        block_mmengine(monkeypatch)
    return request.param


def test_mmengine_names_are_runnerxs_objects_with_or_without_mmengine(tmp_path, mmengine):
    imported_before = {name for name in sys.modules if name.startswith("mmengine")}
    cfg = Config.fromfile(write_tree(tmp_path, FILES) / "toy.py")
    assert {name for name in sys.modules if name.startswith("mmengine")} == imported_before
    hooks = cfg.default_hooks
    assert [hooks.timer.type, hooks.logger.type, hooks.checkpoint.type] == [
        IterTimerHook,
        LoggerHook,
        CheckpointHook,
    ]
    assert cfg.log_processor.type is LogProcessor
    assert cfg.train_dataloader.sampler.type is DefaultSampler
    assert cfg.optim_wrapper.type is OptimWrapper
    assert cfg.train_cfg.type is IterBasedTrainLoop
    # names bound by imports are not config values, read_base included
    assert {"IterTimerHook", "OptimWrapper", "read_base", "SGD"}.isdisjoint(cfg)


def test_it_trains_without_mmengine_and_its_dump_reloads(tmp_path, monkeypatch):
    block_mmengine(monkeypatch)
    cfg = Config.fromfile(write_tree(tmp_path, FILES) / "toy.py")
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 2 and (tmp_path / "work" / "iter_2.pth").is_file()
    assert {LoggerHook, CheckpointHook, IterTimerHook} <= {type(hook) for hook in runner.hooks}

    reloaded = Config.fromstring(cfg.pretty_text, ".py")
    timer = reloaded.default_hooks.timer.type
    assert isinstance(timer, str) and HOOKS.get(timer) is IterTimerHook
    assert reloaded.optim_wrapper.optimizer == dict(type="torch.optim.sgd.SGD", lr=0.1)
    assert Config.fromstring(reloaded.pretty_text, ".py") == reloaded


def test_a_name_runnerx_lacks_stays_a_string_the_registry_resolves(tmp_path, mmengine):
    files = {
        "lazy.py": """\
            from mmengine.visualization import AimVisBackend, LocalVisBackend
            from mmengine.not_a_module import Thing
            import mmengine
            import mmengine.hooks as hooks

            vis_backends = [dict(type=AimVisBackend), dict(type=LocalVisBackend)]
            other = dict(type=Thing)
            hook = dict(type=hooks.IterTimerHook)
            log_processor = dict(type=mmengine.runner.LogProcessor)
            """
    }
    cfg = Config.fromfile(write_tree(tmp_path, files) / "lazy.py")
    from runnerx.visualization import LocalVisBackend

    assert cfg.vis_backends == [
        dict(type="mmengine.visualization.AimVisBackend"),
        dict(type=LocalVisBackend),
    ]
    assert cfg.other.type == "mmengine.not_a_module.Thing"
    assert cfg.hook.type is IterTimerHook and cfg.log_processor.type is LogProcessor
    assert {"hooks", "mmengine"}.isdisjoint(cfg)


def test_mmengine_imports_in_a_base_style_config_are_runnerxs_too(tmp_path, mmengine):
    files = {
        "base.py": "optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n",
        "child.py": """\
            _base_ = './base.py'
            from mmengine.optim import OptimWrapper as Wrapper

            optim_wrapper = dict(type=Wrapper)
            """,
    }
    cfg = Config.fromfile(write_tree(tmp_path, files) / "child.py")
    assert cfg.optim_wrapper == dict(type=OptimWrapper, optimizer=dict(type="SGD", lr=0.1))
