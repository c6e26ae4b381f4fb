"""What MMEngine's own dist tests rely on: the ``mmengine.dist.dist`` and ``mmengine.dist.utils``
import paths, ``init_dist('pytorch', rank=..., world_size=...)`` in ranks a test spawned, and
``get_local_rank`` answering from the group of ``init_local_group`` (2 real ranks, gloo, run
by runnerx's MultiProcessTestCase)."""

import importlib
import inspect
import os

import mmengine.dist.dist
import mmengine.dist.utils
import pytest

import runnerx.dist
from runnerx.dist import (
    get_dist_info,
    get_local_group,
    get_local_rank,
    get_local_size,
    init_dist,
    init_local_group,
)
from runnerx.dist.launch import shutdown_dist
from runnerx.testing._internal import MultiProcessTestCase


@pytest.mark.parametrize("module", [mmengine.dist.dist, mmengine.dist.utils])
def test_mmengine_dist_module_paths_have_runnerx_dist_functions(module):
    ours = importlib.import_module(module.__name__.replace("mmengine", "runnerx"))
    names = [
        name
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
        if not name.startswith("_")
    ]
    assert len(names) > 10
    for name in names:
        assert getattr(ours, name) is getattr(runnerx.dist, name), name


class TestRanksStartedByATest(MultiProcessTestCase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()

    def test_init_dist_arguments_and_the_local_rank(self):
        for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
            os.environ.pop(name, None)
        for run in range(2):  # the second run: a new group after the first ended
            init_dist(
                "pytorch",
                backend="gloo",
                rank=self.rank,
                world_size=self.world_size,
                init_method=f"file://{self.file_name}.{run}",
            )
            self.assertEqual(get_dist_info(), (self.rank, 2))
            init_local_group(node_rank=0, num_gpus_per_node=2)
            self.assertEqual((get_local_rank(), get_local_size()), (self.rank, 2))
            shutdown_dist()
            self.assertIsNone(get_local_group())
