"""``type='ZeroRedundancyOptimizer'`` with MMEngine's ``optimizer_type``: on two real ranks
(gloo) it trains to the weights of the plain optimizer in one process, and its state dict
(gathered to rank 0, as MMEngine saves it) resumes the run."""

import os
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
from torch import nn

from runnerx.optim import build_optim_wrapper

WORLD_SIZE = 2
OPTIMIZER = dict(lr=0.1, momentum=0.9, weight_decay=1e-3)
PARAMWISE = dict(bias_lr_mult=2.0)  # two param groups


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))


def batches(count):
    generator = torch.Generator().manual_seed(1)
    return [torch.randn(6, 4, generator=generator) for _ in range(count)]


def train(model, optim_wrapper, inputs):
    for batch in inputs:  # every rank sees the same batch, so the gradients agree
        optim_wrapper.update_params(model(batch).pow(2).mean())


def zero_cfg():
    return dict(
        optimizer=dict(type="ZeroRedundancyOptimizer", optimizer_type="SGD", **OPTIMIZER),
        paramwise_cfg=PARAMWISE,
    )


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    inputs = batches(6)
    model = make_model()
    optim_wrapper = build_optim_wrapper(model, zero_cfg())
    train(model, optim_wrapper, inputs[:3])
    state = optim_wrapper.state_dict()  # every rank calls it: it gathers the shards
    path = os.path.join(out_dir, "optimizer.pth")
    if rank == 0:
        torch.save({"model": model.state_dict(), "optimizer": state}, path)
    dist.barrier()
    # resume from the saved state in a fresh model and optimizer, as a checkpoint would
    saved = torch.load(path, weights_only=True)
    resumed = make_model()
    resumed.load_state_dict(saved["model"])
    resumed_wrapper = build_optim_wrapper(resumed, zero_cfg())
    resumed_wrapper.load_state_dict(saved["optimizer"])
    train(resumed, resumed_wrapper, inputs[3:])
    return {
        "type": type(optim_wrapper.optimizer).__name__,
        "local": type(optim_wrapper.optimizer.optim).__name__,
        "state_sizes": (len(state.get("state", {})), len(state.get("param_groups", []))),
        "weights": [param.detach().clone() for param in resumed.parameters()],
    }


@pytest.fixture(scope="module")
def rank_outcomes(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("zero"), WORLD_SIZE, timeout=120)


def test_two_ranks_train_to_the_plain_optimizers_weights(rank_outcomes):
    model = make_model()
    plain = build_optim_wrapper(
        model, dict(optimizer=dict(type="SGD", **OPTIMIZER), paramwise_cfg=PARAMWISE)
    )
    train(model, plain, batches(6))
    for outcome in rank_outcomes:
        assert (outcome["type"], outcome["local"]) == ("ZeroRedundancyOptimizer", "SGD")
        for ours, expected in zip(outcome["weights"], model.parameters()):
            torch.testing.assert_close(ours, expected)


def test_state_dict_is_whole_on_rank_zero_and_empty_elsewhere(rank_outcomes):
    assert rank_outcomes[0]["state_sizes"] == (6, 2)  # 6 parameters' momentum, 2 groups
    assert rank_outcomes[1]["state_sizes"] == (0, 0)


def test_one_process_is_told_to_use_the_optimizer_itself():
    with pytest.raises(RuntimeError, match="needs a distributed run.*type='SGD'"):
        build_optim_wrapper(nn.Linear(2, 1), zero_cfg())
