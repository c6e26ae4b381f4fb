"""Preemption and exact resume with two real ranks (spawned processes, gloo, CPU).

A stop signal reaches only rank 1; both ranks stop at the same iteration boundary and save
one checkpoint together, and the run resumed from it ends with the weights of the run that
was never interrupted: under DDP (a full checkpoint file) and under FSDP with sharded
checkpoints (a folder every rank writes to). A signal in the iteration before a validation
stops every rank there, before validating.
"""

import os
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from runnerx import HOOKS, Config
from runnerx.checkpoint.runner_state import find_latest_checkpoint
from runnerx.hooks import Hook, preempted_by
from runnerx.parallel import model_state_dict
from runnerx.runner import Runner
from tests.hooks.test_hooks_preemption import WaitForMaxTimeAtIter  # noqa: F401 (registers it)

ROOT = Path(__file__).parents[2]
WORLD_SIZE = 2
SIGNALLED_AT = 9  # rank 1 gets the signal during this iteration (an epoch is 12 per rank)

STRATEGIES = {
    "ddp": None,
    "fsdp_sharded": dict(type="FSDP", sharding="zero3", state_dict_type="sharded"),
}


@HOOKS.register_module()
class SignalRankAtIter(Hook):
    """Sends SIGUSR1 to this process during iteration ``at``, on rank ``rank`` only."""

    def __init__(self, at: int, rank: int):
        self.at, self.rank = at, rank

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.rank == self.rank and runner.iter + 1 == self.at:
            os.kill(os.getpid(), 10)  # SIGUSR1


@HOOKS.register_module()
class CountRankValidations(Hook):
    """Counts the validations that began."""

    def __init__(self):
        self.count = 0

    def before_val_epoch(self, runner):
        self.count += 1


def digits_cfg(work_dir: str, strategy, **changes) -> Config:
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = work_dir
    cfg.launcher = "pytorch"
    cfg.merge_from_dict({"train_cfg.max_epochs": 2, "param_scheduler.1.end": 2})
    cfg.default_hooks.logger = dict(type="LoggerHook", interval=5)
    if strategy is not None:
        cfg.strategy = strategy
    cfg.merge_from_dict(changes)
    return cfg


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    return train_and_check(out_dir)  # its runners are gone when it returns


def train_and_check(out_dir):
    outcome = {}
    for name, strategy in STRATEGIES.items():
        folder = os.path.join(out_dir, name)
        straight = Runner.from_cfg(digits_cfg(os.path.join(folder, "straight"), strategy))
        straight.train()
        outcome[f"{name}/wrapper"] = type(straight.model).__name__
        outcome[f"{name}/straight"] = model_state_dict(straight.model)

        cfg = digits_cfg(os.path.join(folder, "preempted"), strategy)
        cfg.custom_hooks = [dict(type="SignalRankAtIter", at=SIGNALLED_AT, rank=1)]
        preempted = Runner.from_cfg(cfg)
        preempted.train()
        outcome[f"{name}/stopped"] = (preempted_by(preempted), preempted.iter)
        dist.barrier()
        saved = outcome[f"{name}/checkpoint"] = find_latest_checkpoint(cfg.work_dir)
        # what it is now: the resumed run's periodic checkpoints rotate it out
        outcome[f"{name}/saved"] = sorted(os.listdir(saved)) if os.path.isdir(saved) else None
        outcome[f"{name}/saved_file"] = os.path.isfile(saved)

        resumed = Runner.from_cfg(digits_cfg(cfg.work_dir, strategy, resume=True))
        resumed.train()
        outcome[f"{name}/resumed"] = model_state_dict(resumed.model)

    # max_time runs out on rank 1 only (rank 0 has none): both stop at the same boundary
    rank = dist.get_rank()
    preemption = dict(max_time=2) if rank == 1 else dict()
    cfg = digits_cfg(os.path.join(out_dir, "max_time"), None)
    cfg.default_hooks.preemption = preemption
    cfg.custom_hooks = [dict(type="WaitForMaxTimeAtIter", at=SIGNALLED_AT, rank=1)]
    limited = Runner.from_cfg(cfg)
    limited.train()
    outcome["max_time/stopped"] = (preempted_by(limited), limited.iter)
    return outcome


#: run: (the iteration rank 1 gets the signal in, a validation follows it; config changes)
NEAR_VALIDATION = {
    "epoch_end": (12, {}),  # the epoch's last iteration
    "mid_epoch": (6, {"train_cfg.val_check_interval": 0.5}),
    "iterations": (8, {"train_cfg": dict(by_epoch=False, max_iters=20, val_interval=4)}),
}


def run_rank_near_validation(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    outcome = {}
    for name, (at, changes) in NEAR_VALIDATION.items():
        cfg = digits_cfg(os.path.join(out_dir, name), None)
        cfg.merge_from_dict({"param_scheduler": None, "default_hooks.checkpoint": None})
        if "train_cfg" in changes:
            cfg.train_cfg = changes["train_cfg"]
        else:
            cfg.merge_from_dict(changes)
        cfg.custom_hooks = [
            dict(type="SignalRankAtIter", at=at, rank=1),
            dict(type="CountRankValidations"),
        ]
        runner = Runner.from_cfg(cfg)
        runner.train()
        (counter,) = (hook for hook in runner.hooks if isinstance(hook, CountRankValidations))
        outcome[name] = (preempted_by(runner), runner.iter, counter.count)
    return outcome


def test_a_signal_before_a_validation_stops_every_rank_before_it(tmp_path, spawn_ranks):
    ranks = spawn_ranks(run_rank_near_validation, tmp_path, WORLD_SIZE, timeout=300)
    # read with a blocking check there, not one iteration late: no validation, no iteration
    # more (only the iteration-based run's earlier validation, after iteration 4, ran)
    expected = {
        "epoch_end": ("SIGUSR1", 12, 0),
        "mid_epoch": ("SIGUSR1", 6, 0),
        "iterations": ("SIGUSR1", 8, 1),
    }
    assert ranks == [expected] * WORLD_SIZE


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, spawn_ranks):
    out_dir = tmp_path_factory.mktemp("preemption")
    return out_dir, spawn_ranks(run_rank, out_dir, WORLD_SIZE, timeout=300)


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_rank_stops_at_the_same_boundary_after_one_rank_is_signalled(outcomes, strategy):
    _, ranks = outcomes
    # the ranks agree one iteration after the signal, without waiting inside a step
    assert [rank[f"{strategy}/stopped"] for rank in ranks] == [("SIGUSR1", SIGNALLED_AT + 1)] * 2


def test_max_time_on_one_rank_stops_every_rank_at_the_same_boundary(outcomes):
    _, ranks = outcomes
    assert [rank["max_time/stopped"] for rank in ranks] == [("max_time", SIGNALLED_AT + 1)] * 2


def test_ddp_saves_one_full_file_and_fsdp_a_folder_of_shards(outcomes):
    out_dir, ranks = outcomes
    assert ranks[0]["ddp/wrapper"] == "DistributedDataParallelModel"
    assert ranks[0]["fsdp_sharded/wrapper"] == "FullyShardedModel"
    ddp_checkpoint = Path(ranks[0]["ddp/checkpoint"])
    assert ddp_checkpoint == out_dir / "ddp/preempted" / f"iter_{SIGNALLED_AT + 1}.pth"
    assert ranks[0]["ddp/saved_file"]
    sharded = Path(ranks[0]["fsdp_sharded/checkpoint"])
    assert sharded.name == f"iter_{SIGNALLED_AT + 1}.pth"
    assert {".metadata", "extra.pth"} <= set(ranks[0]["fsdp_sharded/saved"])
    assert not list(sharded.parent.glob("*.partial"))


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_the_resumed_run_ends_with_the_weights_of_the_uninterrupted_one(outcomes, strategy):
    _, ranks = outcomes
    assert len(ranks[0][f"{strategy}/straight"]) > 4  # rank 0 holds the whole model
    for rank in ranks:
        expected, actual = rank[f"{strategy}/straight"], rank[f"{strategy}/resumed"]
        assert expected.keys() == actual.keys()
        for key, value in expected.items():
            assert torch.equal(value, actual[key]), f"{strategy}: {key} differs after resuming"


def test_a_sharded_checkpoint_loads_with_load_from_in_a_single_process(outcomes, tmp_path):
    out_dir, ranks = outcomes
    folder = out_dir / "fsdp_sharded/straight/epoch_2.pth"
    assert folder.is_dir()
    cfg = digits_cfg(str(tmp_path / "single"), None, load_from=str(folder), launcher="none")
    runner = Runner.from_cfg(cfg)
    runner.load_or_resume()
    expected = ranks[0]["fsdp_sharded/straight"]
    actual = runner.unwrapped_model.state_dict()
    for key, value in expected.items():
        assert torch.equal(value, actual[key]), key
