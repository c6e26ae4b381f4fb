"""DDP with two real ranks (spawned processes, gloo, CPU): each rank trains on half of every
batch and ends where one process training on the whole batches ends."""

from datetime import timedelta

import pytest
import torch
import torch.distributed as dist

from runnerx.logging import MessageHub
from runnerx.optim import AmpOptimWrapper, OptimWrapper
from runnerx.parallel import DistributedDataParallelModel, model_state_dict, prepare_model
from tests.parallel.ranks_common import (
    WORLD_SIZE,
    assert_same_tensors,
    batches,
    make_model,
    rank_share,
    train,
)


def make_optim_wrapper(model, kind="plain", accumulative_counts=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    if kind == "bf16":
        return AmpOptimWrapper(
            dtype="bfloat16", optimizer=optimizer, accumulative_counts=accumulative_counts
        )
    return OptimWrapper(optimizer, accumulative_counts=accumulative_counts)


def single_process(kind="plain", accumulative_counts=1):
    """The reference: one process, whole batches (each micro-step of accumulation takes
    what the two ranks take together)."""
    model = make_model()
    optim_wrapper = make_optim_wrapper(model, kind, accumulative_counts)
    train(model, optim_wrapper, batches())
    return model.state_dict()


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    torch.set_num_threads(1)
    MessageHub.get_instance("ddp-test")
    return train_and_check(rank)  # its models are gone when it returns


def train_and_check(rank):
    data = [rank_share(batch, rank) for batch in batches()]
    outcome = {}

    model = prepare_model(make_model())  # distributed and no strategy: DDP
    outcome["default_wrapper"] = type(model).__name__
    train(model, make_optim_wrapper(model), data)
    outcome["plain"] = model_state_dict(model)

    model = prepare_model(make_model(), strategy="ddp")
    first_grads = {}

    def keep_local_gradient():
        first_grads.update(
            {name: param.grad.clone() for name, param in model.module.named_parameters()}
        )

    train(model, make_optim_wrapper(model, accumulative_counts=2), data, keep_local_gradient)
    outcome["accumulate"] = model_state_dict(model)
    outcome["accumulate_first_grads"] = first_grads

    model = prepare_model(make_model(), strategy=dict(type="DDP", static_graph=True))
    train(model, make_optim_wrapper(model, "bf16"), data)
    outcome["bf16"] = model_state_dict(model)

    wrapper_cfg = dict(type="MMDistributedDataParallel", find_unused_parameters=True)
    model = prepare_model(make_model(), model_wrapper_cfg=wrapper_cfg)
    outcome["mmengine_wrapper"] = (type(model).__name__, model.find_unused_parameters)
    train(model, make_optim_wrapper(model), data)
    outcome["mmengine"] = model_state_dict(model)

    try:
        prepare_model(make_model(), sync_bn="torch")
    except ValueError as error:
        outcome["sync_bn_on_cpu"] = str(error)
    return outcome


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("ddp"), WORLD_SIZE, timeout=120)


def test_distributed_runs_are_wrapped_in_ddp_by_default(outcomes):
    assert outcomes[0]["default_wrapper"] == "DistributedDataParallelModel"


@pytest.mark.parametrize("scenario", ["plain", "mmengine"])
def test_two_ranks_end_with_the_weights_of_one_process_with_the_whole_batch(outcomes, scenario):
    expected = single_process()
    for outcome in outcomes:
        assert_same_tensors(outcome[scenario], expected, atol=1e-5)
    # the steps changed the weights: the comparison is not of two untouched models
    assert not torch.equal(expected["head.weight"], make_model().state_dict()["head.weight"])


def test_mmengine_model_wrapper_cfg_builds_our_ddp_with_its_options(outcomes):
    assert outcomes[0]["mmengine_wrapper"] == ("DistributedDataParallelModel", True)


def test_accumulation_skips_the_all_reduce_until_the_last_micro_step(outcomes):
    first = [outcome["accumulate_first_grads"] for outcome in outcomes]
    # after the first of two micro-steps each rank still holds its own gradient (no_sync) ...
    weight = "token_embedding.weight"
    assert not torch.allclose(first[0][weight], first[1][weight])
    # ... and after the window both hold the update of one process accumulating whole batches
    expected = single_process(accumulative_counts=2)
    for outcome in outcomes:
        assert_same_tensors(outcome["accumulate"], expected, atol=1e-5)


def test_bf16_autocast_under_ddp_matches_one_process_in_bf16(outcomes):
    expected = single_process("bf16")
    for outcome in outcomes:
        assert_same_tensors(outcome["bf16"], expected, atol=2e-2)
    assert_same_tensors(outcomes[0]["bf16"], outcomes[1]["bf16"], atol=0)


def test_sync_bn_is_refused_in_a_distributed_cpu_run(outcomes):
    assert (
        "SyncBatchNorm synchronises statistics only between GPUs" in outcomes[0]["sync_bn_on_cpu"]
    )


def test_ddp_wrapper_rejects_an_unknown_option():
    with pytest.raises(TypeError, match="'find_unused_params'.*Did you mean 'find_unused_par"):
        DistributedDataParallelModel(make_model(), find_unused_params=True)
