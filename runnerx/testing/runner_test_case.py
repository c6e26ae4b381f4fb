"""RunnerTestCase: a ``unittest.TestCase`` that builds real Runners on toy components, for
testing a hook, loop or metric of your own (MMEngine's ``mmengine.testing.RunnerTestCase``).

.. code-block:: python

    from runnerx.testing import RunnerTestCase

    class TestMyHook(RunnerTestCase):
        def test_my_hook(self):
            cfg = self.epoch_based_cfg.copy()
            cfg.custom_hooks = [dict(type='MyHook')]
            runner = self.build_runner(cfg)
            runner.train()
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from typing import Any
from unittest import TestCase
from uuid import uuid4

import torch

from runnerx.config import Config
from runnerx.dist import is_distributed
from runnerx.dist.launch import shutdown_dist
from runnerx.logging import MessageHub, get_logger
from runnerx.registry import DefaultScope
from runnerx.runner import Runner
from runnerx.visualization import Visualizer

from .toy import (
    ToyDataset,
    ToyMetric,
    ToyModel,
    register_toy_components,
    unregister_toy_components,
)


def _dataloader(sampler: str, shuffle: bool) -> dict:
    return dict(
        dataset=dict(type="ToyDataset"),
        sampler=dict(type=sampler, shuffle=shuffle),
        batch_size=3,
        num_workers=0,
    )


def epoch_based_cfg(work_dir: str) -> dict:
    """The config of :attr:`RunnerTestCase.epoch_based_cfg`: 2 epochs of 4 iterations,
    validated after each, logged every iteration."""
    return dict(
        work_dir=work_dir,
        model=dict(type="ToyModel"),
        train_dataloader=_dataloader("DefaultSampler", shuffle=True),
        val_dataloader=_dataloader("DefaultSampler", shuffle=False),
        val_evaluator=[dict(type="ToyMetric")],
        test_dataloader=_dataloader("DefaultSampler", shuffle=False),
        test_evaluator=[dict(type="ToyMetric")],
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=1),
        val_cfg=dict(),
        test_cfg=dict(),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
        custom_hooks=[],
        # MMEngine names nccl, which fails without CUDA once a launcher is set
        env_cfg=dict(dist_cfg=dict(backend="nccl" if torch.cuda.is_available() else "gloo")),
        experiment_name="test1",
    )


def iter_based_cfg(work_dir: str) -> dict:
    """The config of :attr:`RunnerTestCase.iter_based_cfg`: 12 iterations on an infinite
    sampler, validated every 1000 (so only by ``runner.val()``), a checkpoint at the end."""
    cfg = epoch_based_cfg(work_dir)
    cfg.update(
        train_dataloader=_dataloader("InfiniteSampler", shuffle=True),
        log_processor=dict(by_epoch=False),
        train_cfg=dict(by_epoch=False, max_iters=12),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=12, by_epoch=False),
        ),
    )
    return cfg


def _forget_instances(*classes: Any) -> None:
    """Drop every named instance of these ManagerMixin classes (the next
    ``get_current_instance()`` starts afresh)."""
    for cls in classes:
        cls._instances.clear()
        cls._current = None


class RunnerTestCase(TestCase):
    """Builds Runners on ``ToyModel``/``ToyDataset``/``ToyMetric`` (registered in
    :meth:`setUp`, removed in :meth:`tearDown`), each run in a fresh temporary work dir.

    - ``self.epoch_based_cfg`` / ``self.iter_based_cfg``: :class:`Config` of a 2-epoch and a
      12-iteration run; copy one (``cfg.copy()``) and change what the test is about.
    - :meth:`build_runner`: ``Runner.from_cfg(cfg)`` under a unique experiment name.
    - :meth:`setup_dist_env`: the environment of rank 0 of 1 (a new ``MASTER_PORT`` each
      call) for a test that sets ``cfg.launcher = 'pytorch'``.
    - :meth:`tearDown` forgets the runs' MessageHubs, visualizers and default scopes, makes
      the plain ``'runnerx'`` logger current again, and leaves a process group it finds.
    """

    #: the environment :meth:`setup_dist_env` sets (its port grows by one each call)
    dist_cfg = dict(
        MASTER_ADDR="127.0.0.1", MASTER_PORT=29600, RANK="0", WORLD_SIZE="1", LOCAL_RANK="0"
    )

    def setUp(self) -> None:
        """Register the toy components and make the two configs, working in a temp dir."""
        self.temp_dir = tempfile.TemporaryDirectory()
        register_toy_components()
        self.epoch_based_cfg = Config(epoch_based_cfg(self.temp_dir.name))
        self.iter_based_cfg = Config(iter_based_cfg(self.temp_dir.name))

    def tearDown(self) -> None:
        """Undo what the runs left in the process (see the class docstring)."""
        logging.shutdown()  # flush and close the log files, so the temp dir can go
        get_logger("runnerx")
        _forget_instances(MessageHub, Visualizer, DefaultScope)
        unregister_toy_components()
        self.temp_dir.cleanup()
        if is_distributed():
            shutdown_dist(wait_for_others=False)

    def build_runner(self, cfg: Config) -> Runner:
        """``Runner.from_cfg(cfg)``, with ``cfg.experiment_name`` set to a unique name."""
        cfg.experiment_name = self.experiment_name
        return Runner.from_cfg(cfg)

    @property
    def experiment_name(self) -> str:
        """A new name on each access: the test's name, the time and a uuid (runners built in
        the same second must not share their MessageHub or visualizer)."""
        return f"{self._testMethodName}_{time.time()}_{uuid4().hex}"

    def setup_dist_env(self) -> None:
        """Set MASTER_ADDR, MASTER_PORT (one more than last time), RANK, WORLD_SIZE and
        LOCAL_RANK in ``os.environ`` from :attr:`dist_cfg`."""
        self.dist_cfg["MASTER_PORT"] += 1
        for name, value in self.dist_cfg.items():
            os.environ[name] = str(value)

    def clear_work_dir(self) -> None:
        """Empty the work dir (e.g. between two runs of one test), closing the log files."""
        logging.shutdown()
        for entry in os.scandir(self.temp_dir.name):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.remove(entry.path)


# the toy components also live here, where MMEngine defines them
__all__ = ["RunnerTestCase", "ToyDataset", "ToyMetric", "ToyModel"]
