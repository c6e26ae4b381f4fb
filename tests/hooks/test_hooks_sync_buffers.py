"""SyncBuffersHook with two real ranks (spawned processes, gloo): buffers of every dtype become
their mean over the ranks in one collective per dtype, MMEngine's all_reduce_params giving the
same numbers; a validation right after a training epoch does not sync twice; in a real
distributed Runner built from a config, diverged BatchNorm statistics are synced before
validating. In one process the hook does nothing."""

import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import torch.distributed as dist
from torch import nn

from runnerx import HOOKS, MODELS, Config
from runnerx.hooks import Hook, SyncBuffersHook
from runnerx.model.examples.digits_convnet import DigitsConvNet
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]
WORLD_SIZE = 2


class WithBuffers(nn.Module):
    """A Linear + BatchNorm model with float64 and bool buffers too."""

    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
        self.register_buffer("scale", torch.zeros(2, dtype=torch.float64))
        self.register_buffer("mask", torch.zeros(3, dtype=torch.bool))


def rank_values(rank, offset=0.0):
    """Different buffer values on each rank (num_batches_tracked: 3 and 8, mean 5.5)."""
    return {
        "layers.1.running_mean": torch.tensor([1.0, 2.0, 3.0]) * (rank + 1) + rank + offset,
        "layers.1.running_var": torch.full((3,), 3.0 * rank + 1 + offset),
        "layers.1.num_batches_tracked": torch.tensor(3 + 5 * rank),
        "scale": torch.tensor([0.1, -2.5], dtype=torch.float64) * (rank + 1),
        "mask": torch.tensor([True, True, False])
        if rank == 0
        else torch.tensor([True, False, False]),
    }


def set_buffers(model, values):
    buffers = dict(model.named_buffers())
    with torch.no_grad():
        for name, value in values.items():
            buffers[name].copy_(value)


def snapshot(model):
    return {name: buffer.clone() for name, buffer in model.named_buffers()}


@MODELS.register_module()
class SyncBuffersDigitsNet(DigitsConvNet):
    """DigitsConvNet with a BatchNorm after its first convolution."""

    def __init__(self, channels=(8, 16), **kwargs):
        super().__init__(channels=channels, **kwargs)
        self.features.insert(1, nn.BatchNorm2d(channels[0]))


@HOOKS.register_module()
class BuffersBeforeSync(Hook):
    """Keeps the model's buffers as they are before SyncBuffersHook acts at before_val_epoch."""

    priority = "HIGH"

    def __init__(self):
        self.seen = []

    def before_val_epoch(self, runner):
        self.seen.append(snapshot(runner.unwrapped_model))


def hook_points(rank):
    """The hook's points on a DDP-wrapped model, counting all_reduce calls."""
    calls = []
    original = dist.all_reduce

    def counting(tensor, *args, **kwargs):
        calls.append(tensor.dtype)
        return original(tensor, *args, **kwargs)

    dist.all_reduce = counting
    torch.manual_seed(0)
    wrapped = nn.parallel.DistributedDataParallel(WithBuffers())
    runner = SimpleNamespace(model=wrapped)
    hook = SyncBuffersHook()
    outcome = {}

    set_buffers(wrapped.module, rank_values(rank))
    oracle = {name: value.clone() for name, value in rank_values(rank).items() if name != "mask"}
    from mmengine.dist import all_reduce_params

    all_reduce_params(list(oracle.values()), op="mean")
    outcome["mmengine"] = oracle
    calls.clear()
    hook.after_train_epoch(runner)
    outcome["after_train_epoch"] = (snapshot(wrapped.module), list(calls))

    # the validation that follows a training epoch finds the buffers synced already
    set_buffers(wrapped.module, rank_values(rank, offset=10.0))
    calls.clear()
    hook.before_val_epoch(runner)
    outcome["val_after_train_epoch"] = (snapshot(wrapped.module), list(calls))
    # a validation with no training epoch ended before it (iteration-based training) syncs
    calls.clear()
    hook.before_val_epoch(runner)
    outcome["val_alone"] = (snapshot(wrapped.module), list(calls))
    dist.all_reduce = original
    return outcome


def digits_runner_cfg(work_dir):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = work_dir
    cfg.launcher = "pytorch"
    cfg.model.type = "SyncBuffersDigitsNet"
    cfg.train_cfg = dict(by_epoch=False, max_iters=4, val_interval=4)
    cfg.train_dataloader.batch_size = 32
    cfg.param_scheduler = None
    cfg.default_hooks.checkpoint = None
    cfg.log_processor = dict(by_epoch=False)
    cfg.custom_hooks = [dict(type="SyncBuffersHook"), dict(type="BuffersBeforeSync")]
    return cfg


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    outcome = hook_points(rank)
    runner = Runner.from_cfg(digits_runner_cfg(os.path.join(out_dir, "work")))
    runner.train()
    outcome["runner_hooks"] = [type(hook).__name__ for hook in runner.hooks]
    outcome["runner_before_sync"] = next(
        hook.seen for hook in runner.hooks if isinstance(hook, BuffersBeforeSync)
    )
    outcome["runner_final"] = snapshot(runner.unwrapped_model)
    del runner
    return outcome


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("sync_buffers"), WORLD_SIZE, timeout=120)


def expected_means():
    per_rank = [rank_values(rank) for rank in range(WORLD_SIZE)]
    means = {
        name: (per_rank[0][name] + per_rank[1][name]) / WORLD_SIZE
        for name in per_rank[0]
        if per_rank[0][name].is_floating_point()
    }
    means["layers.1.num_batches_tracked"] = torch.tensor(5)  # 5.5 rounded toward zero
    means["mask"] = torch.tensor([True, False, False])  # True only where every rank has True
    return means


def assert_equal_buffers(actual, expected):
    assert actual.keys() == expected.keys()
    for name, value in expected.items():
        assert actual[name].dtype == value.dtype, name
        assert torch.equal(actual[name], value), f"{name}: {actual[name]} != {value}"


def test_after_a_training_epoch_every_buffer_is_the_mean_over_the_ranks(ranks):
    for outcome in ranks:
        synced, _ = outcome["after_train_epoch"]
        assert_equal_buffers(synced, expected_means())


def test_the_means_are_those_of_mmengines_all_reduce_params(ranks):
    for outcome in ranks:
        synced, _ = outcome["after_train_epoch"]
        oracle = outcome["mmengine"]
        assert_equal_buffers({name: synced[name] for name in oracle}, oracle)


def test_one_collective_per_dtype(ranks):
    for outcome in ranks:
        _, calls = outcome["after_train_epoch"]
        # float32 (BatchNorm statistics), int64 (num_batches_tracked), float64, bool as int32
        assert sorted(map(str, calls)) == [
            "torch.float32",
            "torch.float64",
            "torch.int32",
            "torch.int64",
        ]


def test_validation_right_after_a_training_epoch_does_not_sync_again(ranks):
    for rank, outcome in enumerate(ranks):
        buffers, calls = outcome["val_after_train_epoch"]
        assert calls == []
        assert_equal_buffers(buffers, rank_values(rank, offset=10.0))


def test_validation_without_a_training_epoch_before_it_syncs(ranks):
    for outcome in ranks:
        buffers, calls = outcome["val_alone"]
        assert len(calls) == 4
        assert torch.equal(
            buffers["layers.1.running_mean"], expected_means()["layers.1.running_mean"] + 10.0
        )
        assert buffers["layers.1.num_batches_tracked"].item() == 5


def test_a_distributed_runner_built_from_the_config_syncs_batchnorm_before_validating(ranks):
    assert "SyncBuffersHook" in ranks[0]["runner_hooks"]
    before = [outcome["runner_before_sync"] for outcome in ranks]
    assert [len(seen) for seen in before] == [1, 1]  # the one validation, after iteration 4
    first, second = before[0][0], before[1][0]
    # each rank's BatchNorm saw only its own batches (DDP does not broadcast buffers)
    assert not torch.equal(first["features.1.running_mean"], second["features.1.running_mean"])
    for outcome in ranks:
        final = outcome["runner_final"]
        for name in ("features.1.running_mean", "features.1.running_var"):
            torch.testing.assert_close(final[name], (first[name] + second[name]) / 2)
        assert final["features.1.num_batches_tracked"].item() == 4
    assert_equal_buffers(ranks[0]["runner_final"], ranks[1]["runner_final"])


def test_in_one_process_it_does_nothing(monkeypatch):
    def no_collective(*args, **kwargs):
        raise AssertionError("a single process must not call all_reduce")

    monkeypatch.setattr(dist, "all_reduce", no_collective)
    model = WithBuffers()
    set_buffers(model, rank_values(1))
    runner = SimpleNamespace(model=model)
    hook = SyncBuffersHook()
    hook.after_train_epoch(runner)
    hook.before_val_epoch(runner)
    hook.before_val_epoch(runner)
    assert_equal_buffers(snapshot(model), rank_values(1))


def test_it_acts_only_after_training_epochs_and_before_validation_epochs():
    hook = HOOKS.build(dict(type="SyncBuffersHook"))
    assert hook.priority == "NORMAL"
    assert hook.overridden_points() == ["after_train_epoch", "before_val_epoch"]
