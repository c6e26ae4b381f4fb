"""MultiProcessTestCase runs each test method in real ranks (2 processes, gloo) and turns what
the ranks did into the test's outcome: passed, failed with the failing rank's traceback,
skipped with the rank's reason, or timed out with the hung rank's stack.

The ``*Case`` classes below are the tests a user would write; each pytest test runs one with
unittest and checks the outcome. They live at module level because spawned ranks import this
module to find them, and ``__test__ = False`` keeps pytest from collecting them itself.
"""

from __future__ import annotations

import json
import os
import sys
import time
import unittest
from pathlib import Path

import pytest
import torch
import torch.distributed as torch_dist

from runnerx.dist import all_gather, all_gather_object, get_world_size, is_distributed
from runnerx.registry import MODELS
from runnerx.testing import RunnerTestCase
from runnerx.testing._internal import TEST_SKIPS, MultiProcessTestCase
from runnerx.testing.toy import ToyModel

OUT = "RUNNERX_TEST_RANKS_OUT"  # where the ranks write what they saw (the env reaches them)


def join_group(case: MultiProcessTestCase) -> None:
    torch_dist.init_process_group(
        "gloo",
        init_method=f"file://{case.file_name}",
        rank=case.rank,
        world_size=case.world_size,
    )


def run_case(case_class: type, method: str) -> unittest.TestResult:
    result = unittest.TestResult()
    case_class(method).run(result)
    return result


class RanksCase(MultiProcessTestCase):
    __test__ = False

    def setUp(self):
        super().setUp()
        self._spawn_processes()

    def test_ranks(self):
        join_group(self)
        seen = all_gather_object([self.rank, self.world_size, self.is_master, self.file_name])
        Path(os.environ[OUT], f"rank{self.rank}.json").write_text(json.dumps(seen))


class ForkedCase(RanksCase):
    __test__ = False

    def setUp(self):
        MultiProcessTestCase.setUp(self)
        self._fork_processes()

    @property
    def world_size(self) -> int:
        return 3


class BehaviourCase(MultiProcessTestCase):
    """Forked ranks (quick to start) that fail, skip, hang or exit as each test says."""

    __test__ = False

    def setUp(self):
        super().setUp()
        self._fork_processes()

    @property
    def timeout(self) -> float:
        return 4

    def test_rank_one_raises(self):
        if self.rank == 1:
            raise ValueError("rank one broke")
        time.sleep(60)  # as if it waited for rank 1 in a collective

    def test_rank_one_skips(self):
        if self.rank == 1:
            self.skipTest("no fancy device on rank 1")

    def test_rank_one_hangs(self):
        if self.rank == 1:
            time.sleep(60)

    def test_rank_one_exits_with_3(self):
        if self.rank == 1:
            sys.exit(3)

    def test_rank_one_exits_with_a_skip_code(self):
        if self.rank == 1:
            sys.exit(TEST_SKIPS["multi-gpu-2"].exit_code)


@pytest.fixture
def out_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(OUT, str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("case_class", [RanksCase, ForkedCase])
def test_each_rank_runs_the_method_as_its_rank_and_the_test_passes(case_class, out_dir):
    case = case_class("test_ranks")
    result = unittest.TestResult()
    case.run(result)
    assert result.wasSuccessful() and not result.skipped  # MMEngine 0.10 reports it skipped
    size = case.world_size
    for rank in range(size):
        seen = json.loads((out_dir / f"rank{rank}.json").read_text())
        assert seen == [[r, size, r == 0, case.file_name] for r in range(size)]
    assert not os.path.exists(case.file_name)  # tearDown removed the shared file


def test_a_failing_rank_fails_the_test_with_its_traceback_and_stops_the_others():
    start = time.monotonic()
    result = run_case(BehaviourCase, "test_rank_one_raises")
    assert len(result.errors) == 1, result
    report = result.errors[0][1]
    assert "Process 1 failed" in report and "ValueError: rank one broke" in report
    assert "Process 0" not in report  # rank 0 was stopped while it waited, it did not fail
    assert time.monotonic() - start < BehaviourCase("test_rank_one_raises").timeout


def test_a_rank_that_skips_skips_the_test_with_its_reason():
    result = run_case(BehaviourCase, "test_rank_one_skips")
    assert [reason for _, reason in result.skipped] == ["no fancy device on rank 1"]
    result = run_case(BehaviourCase, "test_rank_one_exits_with_a_skip_code")
    assert [reason for _, reason in result.skipped] == [TEST_SKIPS["multi-gpu-2"].message]


def test_a_hung_rank_fails_after_the_timeout_and_prints_its_stack(capfd):
    start = time.monotonic()
    result = run_case(BehaviourCase, "test_rank_one_hangs")
    assert time.monotonic() - start < 15
    assert len(result.errors) == 1
    assert "Processes [1] did not finish within timeout=4 s" in result.errors[0][1]
    assert "test_rank_one_hangs" in capfd.readouterr().err  # the stack rank 1 printed


def test_a_non_zero_exit_fails_unless_the_method_skips_return_code_checks():
    result = run_case(BehaviourCase, "test_rank_one_exits_with_3")
    assert len(result.failures) == 1
    assert "Process 1 exited with code 3" in result.failures[0][1]

    case = BehaviourCase("test_rank_one_exits_with_3")
    original_setup = case.setUp

    def setup_that_allows_any_exit_code():
        original_setup()
        case.skip_return_code_checks.append(case.test_rank_one_exits_with_3.__wrapped__)

    case.setUp = setup_that_allows_any_exit_code
    result = unittest.TestResult()
    case.run(result)
    assert result.wasSuccessful() and not result.skipped


class BatchNormToy(ToyModel):
    """A toy model with buffers, which DDP broadcasts from rank 0."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear1 = torch.nn.Sequential(self.linear1, torch.nn.BatchNorm1d(2))


class RunnerRanksCase(MultiProcessTestCase, RunnerTestCase):
    """MMEngine's pattern: RunnerTestCase's setUp runs in each rank via prepare_subprocess."""

    __test__ = False

    def setUp(self):
        super().setUp()
        self._spawn_processes()

    def prepare_subprocess(self):
        MODELS.register_module(module=BatchNormToy, force=True)
        super(MultiProcessTestCase, self).setUp()

    def test_train_in_two_ranks(self):
        join_group(self)
        cfg = self.epoch_based_cfg.copy()
        cfg.model = dict(type="BatchNormToy")
        cfg.launcher = "pytorch"
        runner = self.build_runner(cfg)
        runner.train()
        self.assertEqual(get_world_size(), 2)
        self.assertEqual(runner.iter, 4)  # 12 samples, 2 ranks, batches of 3, 2 epochs
        first, second = all_gather(runner.model.module.linear2.weight.detach())
        self.assertTrue(torch.equal(first, second))  # DDP kept the ranks' weights equal


def test_runner_test_case_trains_in_two_ranks():
    result = run_case(RunnerRanksCase, "test_train_in_two_ranks")
    assert result.wasSuccessful() and not result.skipped, result.errors + result.failures
    assert not is_distributed()  # the test's own process never joined a group
