"""runnerx.dist in one process, without a process group: every collective gives back its input;
the device helpers and the launcher inference against mmengine.dist's; the errors bad
arguments get; init_dist's MMEngine arguments (a one-rank gloo group started from Slurm's
variables)."""

import collections
import os
import socket

import mmengine.dist as mmengine_dist
import numpy as np
import pytest
import torch
import torch.distributed as dist

import runnerx.dist as runnerx_dist
from runnerx.dist.launch import shutdown_dist

Pair = collections.namedtuple("Pair", "first second")


@pytest.fixture(autouse=True)
def no_process_group():
    """Each test starts without a process group; numpy's global generator, which some seed,
    is left as it was."""
    assert not dist.is_initialized()
    state = np.random.get_state()
    yield
    np.random.set_state(state)


def test_collectives_give_back_their_input():
    tensor = torch.arange(6.0).reshape(2, 3)
    before = tensor.clone()
    for op in ("sum", "mean", "max", "bxor"):
        assert runnerx_dist.all_reduce(tensor, op=op) is tensor
    assert runnerx_dist.broadcast(tensor, src=0) is tensor
    assert torch.equal(tensor, before)
    for gathered in (runnerx_dist.all_gather(tensor), runnerx_dist.gather(tensor, dst=0)):
        assert len(gathered) == 1 and gathered[0] is tensor
    thing = {"a": [1, 2]}
    assert runnerx_dist.all_gather_object(thing)[0] is thing
    assert runnerx_dist.gather_object(thing, dst=0)[0] is thing
    assert runnerx_dist.broadcast_object(thing) is thing
    objects = ["x", thing]
    assert runnerx_dist.broadcast_object_list(objects) is objects and objects == ["x", thing]
    values = {"loss": tensor}
    reduced = runnerx_dist.all_reduce_dict(values, op="mean")
    assert reduced is values and reduced["loss"] is tensor
    params = [tensor, torch.ones(2, dtype=torch.int64)]
    runnerx_dist.all_reduce_params(params, op="mean")
    runnerx_dist.average_tensors(params)
    assert torch.equal(params[0], before) and params[1].tolist() == [1, 1]
    results = list(range(5))
    for collect in (
        lambda: runnerx_dist.collect_results(results, 3),
        lambda: runnerx_dist.collect_results(results, 3, device="gpu"),
        lambda: runnerx_dist.collect_results_cpu(results, 3, tmpdir="never/made"),
        lambda: runnerx_dist.collect_results_gpu(results, 3),
    ):
        assert collect() == results[:3]
    assert results == list(range(5))


def test_queries_without_a_process_group():
    assert runnerx_dist.get_dist_info() == mmengine_dist.get_dist_info() == (0, 1)
    assert runnerx_dist.get_backend() is None and mmengine_dist.get_backend() is None
    assert runnerx_dist.get_default_group() is None  # MMEngine's raises
    assert runnerx_dist.get_local_group() is None is mmengine_dist.get_local_group()
    assert runnerx_dist.get_local_size() == mmengine_dist.get_local_size() == 1
    runnerx_dist.init_local_group(node_rank=0, num_gpus_per_node=8)  # nothing to make
    assert runnerx_dist.get_local_group() is None
    assert runnerx_dist.get_comm_device() == mmengine_dist.get_comm_device() == torch.device("cpu")
    assert runnerx_dist.is_main_process() and runnerx_dist.get_rank() == 0
    runnerx_dist.barrier()


def test_sync_random_seed_draws_what_mmengine_draws():
    np.random.seed(3)
    ours = [runnerx_dist.sync_random_seed() for _ in range(3)]
    np.random.seed(3)
    theirs = [mmengine_dist.sync_random_seed() for _ in range(3)]
    assert ours == theirs and len(set(ours)) == 3
    assert all(isinstance(seed, int) and 0 <= seed < 2**31 for seed in ours)


@pytest.mark.parametrize(
    "call",
    [
        lambda d: d.all_reduce(torch.ones(2), op="avg"),
        lambda d: d.all_reduce_params([torch.ones(2)], op="average"),
        lambda d: d.all_reduce_dict({"a": torch.ones(2)}, op=3),
    ],
)
def test_an_unknown_op_names_the_choices(call):
    with pytest.raises(ValueError, match=r"op must be one of sum, mean, product, .*but got"):
        call(runnerx_dist)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda d: d.broadcast_object_list(("a", "b")), "data must be a list, but got tuple"),
        (lambda d: d.all_reduce_dict([torch.ones(1)]), "data must be a dict of tensors"),
    ],
)
def test_mmengines_assertions_are_type_errors(call, match):
    with pytest.raises(AssertionError):
        call(mmengine_dist)
    with pytest.raises(TypeError, match=match) as raised:
        call(runnerx_dist)
    assert isinstance(raised.value, AssertionError)  # what code written for MMEngine catches


def test_collect_results_arguments():
    with pytest.raises(
        ValueError, match=r"device must be one of cpu, gpu, npu, but got 'tpu'"
    ) as raised:
        runnerx_dist.collect_results([1], 1, device="tpu")
    assert isinstance(raised.value, NotImplementedError)  # MMEngine's type
    with pytest.raises(ValueError, match=r"tmpdir must be None when device is 'gpu'") as raised:
        runnerx_dist.collect_results([1], 1, device="gpu", tmpdir="parts")
    assert isinstance(raised.value, AssertionError)


DEVICE_CASES = {
    "tensor": torch.ones(2),
    "list": [torch.ones(1), torch.zeros(2)],
    "nested": {"a": [torch.ones(1), (torch.zeros(1),)], "b": torch.ones(3)},
    "meta": {"a": torch.empty(2, device="meta")},
    "mixed": [torch.ones(1), torch.empty(1, device="meta")],
    "empty": [],
    "empty_inside": {"a": torch.ones(1), "b": {}},
    "string": "cpu",
    "number": 3,
    "array": np.ones(2),
}


@pytest.mark.parametrize("case", DEVICE_CASES)
def test_get_data_device_as_mmengine(case):
    data = DEVICE_CASES[case]
    try:
        expected = mmengine_dist.get_data_device(data)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            runnerx_dist.get_data_device(data)
    else:
        assert runnerx_dist.get_data_device(data) == expected


@pytest.mark.parametrize(
    "case, device",
    # meta tensors cannot come back to the CPU: they hold no data
    [(case, "meta") for case in DEVICE_CASES]
    + [(case, "cpu") for case in DEVICE_CASES if case not in ("meta", "mixed")],
)
def test_cast_data_device_as_mmengine(case, device):
    data, device = DEVICE_CASES[case], torch.device(device)
    try:
        expected = mmengine_dist.cast_data_device(data, device)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error)):
            runnerx_dist.cast_data_device(data, device)
        return
    moved = runnerx_dist.cast_data_device(data, device)

    def same(ours, theirs):
        assert type(ours) is type(theirs)
        if isinstance(theirs, torch.Tensor):
            assert ours.device == theirs.device and ours.shape == theirs.shape
            if theirs.device.type == "cpu":  # not copied when already there
                assert ours.data_ptr() == theirs.data_ptr()
        elif isinstance(theirs, dict):
            assert list(ours) == list(theirs)
            for key in theirs:
                same(ours[key], theirs[key])
        else:
            assert len(ours) == len(theirs)
            for mine, other in zip(ours, theirs):
                same(mine, other)

    same(moved, expected)


def test_cast_data_device_writes_into_out():
    data = {"a": [torch.arange(3.0)], "b": torch.ones(2, 2)}
    out = {"a": [torch.zeros(3)], "b": torch.zeros(2, 2)}
    targets = [out["a"][0], out["b"]]
    runnerx_dist.cast_data_device(data, torch.device("cpu"), out=out)
    assert torch.equal(targets[0], data["a"][0]) and torch.equal(targets[1], data["b"])
    with pytest.raises(TypeError, match="out should be of the type of data"):
        runnerx_dist.cast_data_device([torch.ones(1)], "cpu", out=(torch.ones(1),))
    with pytest.raises(TypeError, match="out should not be a set"):
        runnerx_dist.cast_data_device({torch.ones(1)}, "cpu", out={torch.ones(1)})
    with pytest.raises(ValueError, match="out has 1 items, but data has 2"):
        runnerx_dist.cast_data_device([torch.ones(1)] * 2, "cpu", out=[torch.ones(1)])


def test_cast_data_device_keeps_a_namedtuple():
    moved = runnerx_dist.cast_data_device(Pair(torch.ones(1), torch.zeros(1)), "meta")
    assert type(moved) is Pair and moved.first.device.type == "meta"


LAUNCHER_VARIABLES = ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_LOCAL_RANK")


@pytest.mark.parametrize(
    "present", [(), *[(name,) for name in LAUNCHER_VARIABLES], LAUNCHER_VARIABLES[1:]]
)
def test_infer_launcher_as_mmengine(monkeypatch, present):
    for name in LAUNCHER_VARIABLES:
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    for name in present:
        monkeypatch.setenv(name, "2")
    assert runnerx_dist.infer_launcher() == mmengine_dist.infer_launcher()
    assert runnerx_dist.infer_launcher() == (
        {"WORLD_SIZE": "pytorch", "SLURM_NTASKS": "slurm"}.get(present[0], "mpi")
        if present
        else "none"
    )


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(launcher="ssh"), ValueError, "launcher must be pytorch, slurm or mpi"),
        (dict(launcher="pytorch", init_backend="deepspeed"), ValueError, "init_backend must be"),
        (dict(launcher="pytorch", port=29501), ValueError, "port is only for launcher='slurm'"),
        (dict(launcher="pytorch", timeout="30"), TypeError, "timeout must be a number of seconds"),
        (
            dict(launcher="pytorch", backend="glooo"),
            ValueError,
            r"^backend='glooo' is not a torch.distributed backend .* Did you mean 'gloo'\?",
        ),
    ],
)
def test_init_dist_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        runnerx_dist.init_dist(**kwargs)
    assert not dist.is_initialized()


@pytest.mark.parametrize(
    "launcher, present, missing, how",
    [
        ("slurm", {}, "SLURM_PROCID, SLURM_NTASKS, SLURM_NODELIST", "srun"),
        ("slurm", {"SLURM_NTASKS": "2", "MASTER_ADDR": "127.0.0.1"}, "SLURM_PROCID", "srun"),
        ("mpi", {}, "OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE", "mpirun"),
        ("mpi", {"OMPI_COMM_WORLD_RANK": "0"}, "OMPI_COMM_WORLD_SIZE", "mpirun"),
    ],
)
def test_a_launcher_outside_its_launch_command_says_how_to_start_it(
    monkeypatch, launcher, present, missing, how
):
    """``--launcher slurm`` outside srun and ``--launcher mpi`` outside mpirun name the
    variables they miss and the command that sets them, as ``--launcher pytorch`` does
    outside torchrun, and leave the environment as it was."""
    names = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_NODELIST")
    for name in (*names, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in present.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RuntimeError) as raised:
        runnerx_dist.init_dist(launcher)
    message = str(raised.value)
    assert message.startswith(f"--launcher {launcher} needs {missing} in the environment")
    assert f"start the job with {how}" in message and "--launcher pytorch under torchrun" in message
    assert "RANK" not in os.environ and "WORLD_SIZE" not in os.environ
    assert not dist.is_initialized()


def test_init_dist_from_slurm_with_a_port(monkeypatch):
    # init_dist sets these: set and deleted through monkeypatch, they are restored afterwards
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_PORT"):
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)
    monkeypatch.setenv("SLURM_PROCID", "0")
    monkeypatch.setenv("SLURM_NTASKS", "1")
    monkeypatch.setenv("SLURM_NODELIST", "localhost")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    runnerx_dist.init_dist("slurm", "gloo", timeout=None, port=port)
    try:
        assert runnerx_dist.get_dist_info() == (0, 1)
        assert runnerx_dist.get_backend() == "gloo"
        assert runnerx_dist.get_default_group() is dist.group.WORLD
        with pytest.raises(RuntimeError, match="init_local_group"):
            runnerx_dist.get_local_size()  # neither a local group nor torchrun's variable
    finally:
        shutdown_dist()


def test_master_only_takes_mmengines_keyword():
    decorated = runnerx_dist.master_only(func=lambda value: value * 2)
    assert decorated(3) == 6  # one process: rank 0 runs it
