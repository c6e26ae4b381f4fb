"""RunnerTestCase builds real Runners on the toy components, and its tearDown leaves the
process as it found it (so that the next test's runs start afresh)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from runnerx import Config
from runnerx.dist import get_world_size, is_distributed
from runnerx.hooks import Hook
from runnerx.logging import MessageHub, MMLogger
from runnerx.registry import DATASETS, HOOKS, METRICS, MODELS, DefaultScope
from runnerx.testing import RunnerTestCase
from runnerx.visualization import Visualizer


class CountingHook(Hook):
    """Counts the training iterations it sees (what a user's hook under test would do)."""

    def __init__(self) -> None:
        self.train_iters = 0

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.train_iters += 1


def restore_environment(test: RunnerTestCase) -> None:
    """Put os.environ back as it is now when ``test`` ends (setup_dist_env changes it)."""
    saved = dict(os.environ)

    def restore() -> None:
        os.environ.clear()
        os.environ.update(saved)

    test.addCleanup(restore)


class TestRunnerTestCase(RunnerTestCase):
    def test_configs_train_validate_and_test_the_toy_model(self):
        self.assertIsInstance(self.epoch_based_cfg, Config)
        runner = self.build_runner(self.epoch_based_cfg.copy())
        runner.train()
        self.assertEqual((runner.epoch, runner.iter), (2, 8))  # 12 samples, batches of 3
        self.assertEqual(runner.val(), {"acc": 1})
        self.assertEqual(runner.test(), {"acc": 1})

        runner = self.build_runner(self.iter_based_cfg.copy())
        runner.train()
        self.assertEqual(runner.iter, 12)
        self.assertTrue(Path(runner.work_dir, "iter_12.pth").is_file())
        self.assertEqual(runner.val(), {"acc": 1})

    def test_a_custom_hook_runs_in_a_built_runner(self):
        HOOKS.register_module(module=CountingHook, force=True)
        self.addCleanup(HOOKS.module_dict.pop, "CountingHook", None)
        cfg = self.epoch_based_cfg.copy()
        cfg.custom_hooks = [dict(type="CountingHook")]
        runner = self.build_runner(cfg)
        runner.train()
        (hook,) = [h for h in runner.hooks if isinstance(h, CountingHook)]
        self.assertEqual(hook.train_iters, 8)

    def test_each_runner_gets_an_experiment_name_of_its_own(self):
        first = self.build_runner(self.epoch_based_cfg.copy())
        second = self.build_runner(self.epoch_based_cfg.copy())
        self.assertNotEqual(first.experiment_name, second.experiment_name)
        self.assertIn(self._testMethodName, first.experiment_name)
        self.assertIsNot(first.message_hub, second.message_hub)

    def test_setup_dist_env_sets_rank_0_of_1_on_a_new_port_each_time(self):
        restore_environment(self)
        self.setup_dist_env()
        first_port = os.environ["MASTER_PORT"]
        self.assertEqual(first_port, str(self.dist_cfg["MASTER_PORT"]))
        for name in ("MASTER_ADDR", "RANK", "WORLD_SIZE", "LOCAL_RANK"):
            self.assertEqual(os.environ[name], self.dist_cfg[name])
        self.setup_dist_env()
        self.assertEqual(int(os.environ["MASTER_PORT"]), int(first_port) + 1)

    def test_a_runner_with_the_pytorch_launcher_runs_in_one_process(self):
        restore_environment(self)
        with socket.socket() as sock:  # a free port for setup_dist_env's next one
            sock.bind(("127.0.0.1", 0))
            self.dist_cfg["MASTER_PORT"] = sock.getsockname()[1] - 1
        self.setup_dist_env()
        cfg = self.iter_based_cfg.copy()
        cfg.launcher = "pytorch"
        runner = self.build_runner(cfg)
        runner.train()
        self.assertTrue(is_distributed())
        self.assertEqual(get_world_size(), 1)
        self.tearDown()  # leaves the process group
        self.assertFalse(is_distributed())

    def test_clear_work_dir_empties_it_for_another_run(self):
        runner = self.build_runner(self.iter_based_cfg.copy())
        runner.train()
        self.assertNotEqual(os.listdir(self.temp_dir.name), [])
        self.clear_work_dir()
        self.assertEqual(os.listdir(self.temp_dir.name), [])
        self.build_runner(self.iter_based_cfg.copy()).train()
        self.assertTrue(Path(self.temp_dir.name, "iter_12.pth").is_file())

    def test_tear_down_forgets_the_runs_and_the_toy_components(self):
        cfg = self.epoch_based_cfg.copy()
        cfg.default_scope = "runnerx"
        runner = self.build_runner(cfg)
        runner.train()
        self.assertEqual(DefaultScope.get_current_instance().scope_name, "runnerx")
        self.assertIs(MMLogger.get_current_instance(), runner.logger)
        self.tearDown()
        self.assertFalse(MessageHub.check_instance_created(runner.experiment_name))
        self.assertIsNot(MessageHub.get_current_instance(), runner.message_hub)
        self.assertFalse(Visualizer.check_instance_created(runner.experiment_name))
        self.assertIsNone(DefaultScope.get_current_instance())
        self.assertIsNot(MMLogger.get_current_instance(), runner.logger)
        for registry, name in ((MODELS, "ToyModel"), (DATASETS, "ToyDataset")):
            self.assertNotIn(name, registry.module_dict)
        self.assertNotIn("ToyMetric", METRICS.module_dict)
        self.assertFalse(os.path.exists(self.temp_dir.name))
