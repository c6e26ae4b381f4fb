"""runnerx.dist against mmengine.dist: the same calls on the same inputs give the same results,
with two real ranks (spawned processes, gloo) for the default group, a group of both ranks
and a group of one, and in one process without a process group. Then what runnerx does on
purpose otherwise: dtypes kept by all_reduce_dict, None results kept in order, bool
tensors, non-contiguous tensors, the local group and the shared tmpdir."""

import os
from datetime import timedelta

import mmengine.dist as mmengine_dist
import numpy as np
import pytest
import torch
import torch.distributed as dist

import runnerx.dist as runnerx_dist
from runnerx.model import BaseModel
from runnerx.runner import Runner

WORLD_SIZE = 2
SIZE = 7  # samples in the "dataset"; each rank's share is 4, the last one padding
OPS = ("sum", "mean", "max", "min", "product", "MEAN")
BIT_OPS = ("band", "bor", "bxor")


def rank_inputs(rank):
    """This rank's tensors, different on every rank, fixed by a seed."""
    generator = torch.Generator().manual_seed(100 + rank)
    return dict(
        floats=torch.randn(2, 3, generator=generator),
        doubles=torch.randn(4, generator=generator, dtype=torch.float64),
        ints=torch.randint(-50, 50, (5,), generator=generator),
        bits=torch.randint(0, 256, (4,), generator=generator, dtype=torch.int32),
        # two tensors of 0.6 MiB: bucket_size_mb=1 puts them in separate buckets
        big=torch.randn(2, 150_000, generator=generator),
        mask=torch.rand(6, generator=generator) > 0.4,
    )


def samples():
    return [dict(index=index, score=index * 0.5) for index in range(SIZE)]


def rank_share(rank):
    """What a padding sampler gives this rank: samples rank, rank + 2, ... (sample 0 again)."""
    return (samples() + samples()[:1])[rank::WORLD_SIZE]


def exercise(lib, rank, group, work_dir):
    """The same calls on ``lib`` (runnerx.dist or mmengine.dist); what each left or returned."""
    data = rank_inputs(rank)
    out = {}
    out["dist_info"] = lib.get_dist_info(group)
    out["rank"], out["world"] = lib.get_rank(group), lib.get_world_size(group)
    out["backend"] = lib.get_backend(group)
    out["comm_device"] = lib.get_comm_device(group)
    out["main"] = lib.is_main_process(group)
    lib.barrier(group)
    for op in OPS:
        for kind in ("floats", "ints"):
            tensor = data[kind].clone()
            lib.all_reduce(tensor, op=op, group=group)
            out[f"all_reduce/{op}/{kind}"] = tensor
    for op in BIT_OPS:
        tensor = data["bits"].clone()
        lib.all_reduce(tensor, op=op, group=group)
        out[f"all_reduce/{op}"] = tensor
    out["all_gather"] = lib.all_gather(data["floats"], group)
    for dst in range(WORLD_SIZE):
        out[f"gather/{dst}"] = lib.gather(data["ints"], dst=dst, group=group)
        out[f"gather_object/{dst}"] = lib.gather_object(("rank", rank), dst=dst, group=group)
    for src in range(WORLD_SIZE):
        tensor = data["floats"].clone()
        lib.broadcast(tensor, src=src, group=group)
        out[f"broadcast/{src}"] = tensor
        objects = [f"rank{rank}", {"rank": rank}, [rank] * (rank + 1)]
        lib.broadcast_object_list(objects, src=src, group=group)
        out[f"broadcast_object_list/{src}"] = objects
    out["all_gather_object"] = lib.all_gather_object({"rank": rank, "n": [0] * rank}, group)
    for op in ("sum", "mean"):
        # the ranks insert the keys in different orders
        keys = ("loss", "acc", "aux") if rank == 0 else ("aux", "loss", "acc")
        values = dict(loss=data["floats"], acc=data["doubles"][:2].float(), aux=data["big"][0])
        reduced = {key: values[key] for key in keys}
        lib.all_reduce_dict(reduced, op=op, group=group)
        out[f"all_reduce_dict/{op}"] = reduced
        out[f"all_reduce_dict/{op}/inputs_after"] = values
    for op in ("sum", "mean"):
        for coalesce, bucket_size_mb in ((True, -1), (True, 1), (False, -1)):
            params = [data[key].clone() for key in ("floats", "doubles", "ints", "big")]
            params.append(torch.nn.Parameter(data["floats"].clone()))
            lib.all_reduce_params(
                iter(params), coalesce=coalesce, bucket_size_mb=bucket_size_mb, op=op, group=group
            )
            out[f"all_reduce_params/{op}/{coalesce}/{bucket_size_mb}"] = [
                param.detach() for param in params
            ]
    np.random.seed(7 + rank)
    out["sync_random_seed"] = lib.sync_random_seed(group)
    out["numpy_after_seed"] = np.random.randint(10**6)  # every rank's generator moved on
    if group is None:  # MMEngine's collect_results take no group
        share = rank_share(rank)
        out["collect_results_cpu"] = lib.collect_results_cpu(share, SIZE)
        parts_dir = os.path.join(work_dir, f"parts_{lib.__name__}")
        out["collect_results_cpu/tmpdir"] = lib.collect_results_cpu(share, SIZE, parts_dir)
        out["collect_results_gpu"] = lib.collect_results_gpu(share, SIZE)
        out["collect_results/gpu"] = lib.collect_results(share, SIZE, device="gpu")
        out["collect_results/cpu"] = lib.collect_results(share, SIZE, "cpu", parts_dir)
    return out


def runnerx_only(rank, work_dir):
    """What runnerx does where MMEngine does otherwise (or fails)."""
    data = rank_inputs(rank)
    out = {}
    mixed = {"count": data["ints"].clone(), "loss": data["floats"].clone()}
    out["all_reduce_dict/mixed"] = runnerx_dist.all_reduce_dict(mixed, op="mean")
    for op in ("sum", "mean", "max", "min"):
        masks = [data["mask"].clone(), data["mask"].clone()]
        runnerx_dist.all_reduce_params(masks[:1], op=op)
        runnerx_dist.all_reduce_params(masks[1:], op=op, coalesce=False)
        out[f"mask/{op}"] = masks
    transposed = data["floats"].t()
    out["non_contiguous"] = (runnerx_dist.all_reduce(transposed), transposed.is_contiguous())
    with_nones = [None if sample["index"] % 3 == 0 else sample for sample in rank_share(rank)]
    out["collect_with_none"] = runnerx_dist.collect_results(with_nones, SIZE)
    parts_dir = os.path.join(work_dir, "kept")
    os.makedirs(parts_dir, exist_ok=True)
    open(os.path.join(parts_dir, "keep.txt"), "w").close()
    runnerx_dist.collect_results_cpu(rank_share(rank), SIZE, parts_dir)
    out["tmpdir_after"] = sorted(os.listdir(parts_dir))
    out["default_group"] = runnerx_dist.get_default_group() is dist.group.WORLD
    out["same_default_group"] = (
        runnerx_dist.get_default_group() is mmengine_dist.get_default_group()
    )

    errors = out["errors"] = {}
    for name, call in (
        ("local_group", runnerx_dist.get_local_group),
        ("local_size", runnerx_dist.get_local_size),
        ("wrong_node_rank", lambda: runnerx_dist.init_local_group(1 - rank, 1)),
        ("no_gpus", lambda: runnerx_dist.init_local_group(0, 0)),
    ):
        try:
            call()
        except Exception as error:
            errors[name] = (type(error).__name__, isinstance(error, AssertionError), str(error))
    os.environ["LOCAL_WORLD_SIZE"] = "2"  # torchrun's
    out["local_size_from_torchrun"] = runnerx_dist.get_local_size()
    del os.environ["LOCAL_WORLD_SIZE"]
    # two "nodes" of one process each: every rank makes both groups and keeps its own
    runnerx_dist.init_local_group(node_rank=rank, num_gpus_per_node=1)
    local = runnerx_dist.get_local_group()
    out["local"] = (
        runnerx_dist.get_local_size(),
        runnerx_dist.get_rank(local),
        runnerx_dist.all_reduce(torch.tensor([rank + 1]), group=local),
    )
    try:
        runnerx_dist.init_local_group(rank, 1)
    except RuntimeError as error:
        errors["twice"] = str(error)
    return out


class Tiny(BaseModel):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(2, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        outputs = self.fc(inputs)
        return {"loss": outputs.square().mean()} if mode == "loss" else outputs


def rank_zero_outcomes(rank, out_dir):
    """from_rank_zero: rank 0's result on both ranks, and rank 0's failure on both ranks, also
    where the Runner creates its run's folder (under a file here, so that it cannot)."""
    got = {"value": runnerx_dist.from_rank_zero(lambda: f"made on rank {rank}", "naming it")}

    def fail():
        raise OSError("disk full")

    for key, attempt in (
        ("failure", lambda: runnerx_dist.from_rank_zero(fail, "writing the file")),
        ("runner", lambda: Runner(model=Tiny(), work_dir=os.path.join(out_dir, "a_file", "wd"))),
    ):
        try:
            attempt()
        except Exception as error:
            got[key] = f"{type(error).__name__}: {error}"
    return got


def unequal_epochs(rank, out_dir):
    """A Runner whose ranks read datasets of different sizes (8 and 4 samples: epochs of 2 and
    1 batches of 2, once DefaultSampler has split them): refused on both ranks."""
    runner = Runner(
        model=Tiny(),
        work_dir=os.path.join(out_dir, "unequal"),
        train_dataloader=dict(
            dataset=[dict(inputs=torch.ones(2))] * (8 if rank == 0 else 4),
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_size=2,
        ),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        default_hooks=dict(checkpoint=None),
    )
    try:
        runner.train()
    except ValueError as error:
        return str(error)
    return None


def run_rank(rank, out_dir):
    os.chdir(out_dir)  # MMEngine's collect_results_cpu makes ./.dist_test
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    both = dist.new_group([0, 1])
    solos = [dist.new_group([member]) for member in range(WORLD_SIZE)]  # every rank makes both
    outcome = {}
    for group_name, group in (("default", None), ("both", both), ("solo", solos[rank])):
        for lib in (runnerx_dist, mmengine_dist):
            outcome[group_name, lib.__name__] = exercise(lib, rank, group, out_dir)
    outcome["runnerx_only"] = runnerx_only(rank, out_dir)
    if rank == 0:
        open(os.path.join(out_dir, "a_file"), "w").close()
    dist.barrier()
    outcome["from_rank_zero"] = rank_zero_outcomes(rank, out_dir)
    outcome["unequal_epochs"] = unequal_epochs(rank, out_dir)
    return outcome


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("collectives"), WORLD_SIZE, timeout=120)


def assert_same(ours, theirs, where):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torch.Tensor), where
        assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), where
        assert torch.equal(ours, theirs), where
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), where
        for index, (mine, other) in enumerate(zip(ours, theirs)):
            assert_same(mine, other, f"{where}[{index}]")
    elif isinstance(theirs, dict):
        assert list(ours) == list(theirs), where
        for key in theirs:
            assert_same(ours[key], theirs[key], f"{where}[{key!r}]")
    else:
        assert ours == theirs, where


@pytest.mark.parametrize("group", ["default", "both", "solo"])
def test_two_ranks_get_what_mmengine_gives(ranks, group):
    for rank, outcome in enumerate(ranks):
        ours, theirs = outcome[group, "runnerx.dist"], outcome[group, "mmengine.dist"]
        assert list(ours) == list(theirs)
        for name in theirs:
            assert_same(ours[name], theirs[name], f"rank {rank}, {group} group: {name}")


def test_two_ranks_really_communicate(ranks):
    """The oracle agrees because the values moved: sums, gathers and broadcasts of rank
    inputs, and a seed all ranks share."""
    inputs = [rank_inputs(rank) for rank in range(WORLD_SIZE)]
    default = [outcome["default", "runnerx.dist"] for outcome in ranks]
    solo = [outcome["solo", "runnerx.dist"] for outcome in ranks]
    for rank, outcome in enumerate(default):
        assert outcome["dist_info"] == (rank, WORLD_SIZE)
        assert outcome["backend"] == "gloo" and outcome["comm_device"] == torch.device("cpu")
        assert torch.equal(outcome["all_reduce/sum/ints"], inputs[0]["ints"] + inputs[1]["ints"])
        assert torch.equal(outcome["all_reduce/mean/ints"], outcome["all_reduce/MEAN/ints"])
        gathered = zip(outcome["all_gather"], [each["floats"] for each in inputs], strict=True)
        assert all(torch.equal(mine, sent) for mine, sent in gathered)
        assert len(outcome["gather/0"]) == (WORLD_SIZE if rank == 0 else 0)
        assert outcome["gather_object/1"] == ([("rank", 0), ("rank", 1)] if rank == 1 else None)
        assert torch.equal(outcome["broadcast/1"], inputs[1]["floats"])
        assert outcome["broadcast_object_list/1"][0] == "rank1"
        for way in ("collect_results_cpu", "collect_results_cpu/tmpdir", "collect_results/gpu"):
            assert outcome[way] == (samples() if rank == 0 else None), way
        assert solo[rank]["dist_info"] == (0, 1)
        assert torch.equal(solo[rank]["all_reduce/sum/ints"], inputs[rank]["ints"])
    assert default[0]["sync_random_seed"] == default[1]["sync_random_seed"]
    assert solo[0]["sync_random_seed"] != solo[1]["sync_random_seed"]


def test_all_reduce_dict_keeps_each_dtype(ranks):
    inputs = [rank_inputs(rank) for rank in range(WORLD_SIZE)]
    for outcome in ranks:
        mixed = outcome["runnerx_only"]["all_reduce_dict/mixed"]
        assert mixed["count"].dtype == torch.int64
        # an integer mean rounds toward zero, as mmengine's all_reduce of the tensor alone does
        total = inputs[0]["ints"] + inputs[1]["ints"]
        assert torch.equal(mixed["count"], torch.div(total, WORLD_SIZE, rounding_mode="trunc"))
        assert torch.equal(mixed["loss"], (inputs[0]["floats"] + inputs[1]["floats"]) / 2)


def test_bool_tensors_reduce_as_all_or_any(ranks):
    masks = [rank_inputs(rank)["mask"] for rank in range(WORLD_SIZE)]
    every, any_ = masks[0] & masks[1], masks[0] | masks[1]
    assert not torch.equal(every, any_)  # the inputs tell the two apart
    expected = {"sum": any_, "mean": every, "max": any_, "min": every}
    for outcome in ranks:
        for op, mask in expected.items():
            for reduced in outcome["runnerx_only"][f"mask/{op}"]:
                assert reduced.dtype == torch.bool and torch.equal(reduced, mask), op


def test_non_contiguous_tensor_is_reduced_in_place(ranks):
    expected = sum(rank_inputs(rank)["floats"] for rank in range(WORLD_SIZE)).t()
    for outcome in ranks:
        reduced, contiguous = outcome["runnerx_only"]["non_contiguous"]
        assert not contiguous and torch.equal(reduced, expected)


def test_none_results_keep_their_place(ranks):
    expected = [None if sample["index"] % 3 == 0 else sample for sample in samples()]
    assert ranks[0]["runnerx_only"]["collect_with_none"] == expected
    assert ranks[1]["runnerx_only"]["collect_with_none"] is None


def test_a_given_tmpdir_keeps_what_else_it_holds(ranks):
    assert ranks[0]["runnerx_only"]["tmpdir_after"] == ["keep.txt"]


def test_default_group_is_torchs_world_group(ranks):
    for outcome in ranks:
        assert outcome["runnerx_only"]["default_group"]
        assert outcome["runnerx_only"]["same_default_group"]


def test_local_group(ranks):
    for rank, outcome in enumerate(ranks):
        only = outcome["runnerx_only"]
        errors = only["errors"]
        assert errors["local_group"][0] == "RuntimeError"
        assert "init_local_group" in errors["local_group"][2]
        assert errors["local_size"] == errors["local_group"]
        assert errors["wrong_node_rank"][:2] == ("ValueAssertionError", True)
        assert f"node_rank={1 - rank} does not hold rank {rank}" in errors["wrong_node_rank"][2]
        assert "num_gpus_per_node" in errors["no_gpus"][2]
        assert "called already" in errors["twice"]
        assert only["local_size_from_torchrun"] == 2
        size, local_rank, reduced = only["local"]
        assert (size, local_rank) == (1, 0)
        assert reduced.tolist() == [rank + 1]  # reduced over this rank alone


def test_a_failure_on_rank_zero_reaches_the_ranks_waiting_for_its_result(ranks):
    first, second = (outcome["from_rank_zero"] for outcome in ranks)
    assert first["value"] == second["value"] == "made on rank 0"
    assert first["failure"] == "OSError: disk full"
    assert (
        second["failure"] == "RuntimeError: writing the file failed on rank 0: OSError: disk full"
    )
    assert first["runner"].startswith("NotADirectoryError: work_dir ")
    assert second["runner"] == (
        f"RuntimeError: creating the run's folder in work_dir failed on rank 0: {first['runner']}"
    )


def test_epochs_of_different_lengths_on_the_ranks_are_refused_on_both(ranks):
    expected = (
        "train_dataloader gives the ranks different numbers of batches (rank 0: 2, rank 1: 1): "
        "they would wait for each other forever at the end of the shortest epoch; give every "
        "rank the same dataset (DefaultSampler splits it between them)"
    )
    assert [outcome["unequal_epochs"] for outcome in ranks] == [expected, expected]


def test_one_process_gives_what_mmengine_gives(tmp_path, monkeypatch):
    assert not dist.is_initialized()
    monkeypatch.chdir(tmp_path)
    state = np.random.get_state()  # exercise seeds numpy's global generator
    ours = exercise(runnerx_dist, 0, None, str(tmp_path))
    theirs = exercise(mmengine_dist, 0, None, str(tmp_path))
    np.random.set_state(state)
    assert list(ours) == list(theirs)
    for name in theirs:
        assert_same(ours[name], theirs[name], f"one process: {name}")
    assert ours["dist_info"] == (0, 1) and ours["backend"] is None
    assert ours["collect_results_gpu"] == rank_share(0)[:SIZE]
