"""A parameter that gets no gradient under DDP (two real ranks, gloo, CPU): the error names the
parameters and runnerx's config keys, and the ways out it names do train."""

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
from torch import nn

from runnerx.logging import MessageHub
from runnerx.optim import OptimWrapper
from runnerx.parallel import prepare_model
from tests.parallel.ranks_common import WORLD_SIZE, batches, make_model, rank_share, train


def model_with_unused_head(freeze_embedding=False):
    """The test language model plus a head its loss never uses; optionally with its first
    parameter frozen, which DDP leaves out of its numbering."""
    model = make_model()
    model.unused_head = nn.Linear(4, 4)
    if freeze_embedding:
        model.token_embedding.weight.requires_grad_(False)
    return model


def train_two_steps(model, rank):
    trainable = [param for param in model.parameters() if param.requires_grad]
    optim_wrapper = OptimWrapper(torch.optim.SGD(trainable, lr=0.1))
    data = [rank_share(batch, rank) for batch in batches()[:2]]
    try:
        train(model, optim_wrapper, data)
    except RuntimeError as error:
        return {"message": str(error), "cause": str(error.__cause__)}
    return {"message": None}


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    torch.set_num_threads(1)
    MessageHub.get_instance("ddp-unused-test")
    outcome = {
        "default": train_two_steps(prepare_model(model_with_unused_head()), rank),
        "frozen_first": train_two_steps(prepare_model(model_with_unused_head(True)), rank),
        "find_unused": train_two_steps(
            prepare_model(model_with_unused_head(), find_unused_parameters=True), rank
        ),
    }
    frozen = model_with_unused_head()
    frozen.unused_head.requires_grad_(False)
    outcome["frozen_head"] = train_two_steps(prepare_model(frozen), rank)
    return outcome


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("ddp_unused"), WORLD_SIZE, timeout=120)


@pytest.mark.parametrize("scenario", ["default", "frozen_first"])
def test_the_error_names_the_parameters_and_the_config_keys(outcomes, scenario):
    for outcome in outcomes:
        message = outcome[scenario]["message"]
        assert message is not None, "training with an unused parameter under DDP did not fail"
        assert "parameters unused_head.weight, unused_head.bias got no gradient" in message
        assert "find_unused_parameters=True: at the top level" in message
        assert "strategy=dict(type='DDP', find_unused_parameters=True)" in message
        assert "model_wrapper_cfg=dict(type='MMDistributedDataParallel'" in message
        assert "requires_grad=False" in message
        # torch's own error stays attached as the cause
        assert "Expected to have finished reduction" in outcome[scenario]["cause"]


@pytest.mark.parametrize("scenario", ["find_unused", "frozen_head"])
def test_the_ways_out_the_error_names_train(outcomes, scenario):
    for outcome in outcomes:
        assert outcome[scenario]["message"] is None
