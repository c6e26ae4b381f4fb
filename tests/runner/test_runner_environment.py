"""The run's environment as a Runner sets it up from the config: env_cfg.dist_cfg is checked
for every launcher, env_cfg.resource_limit raises the open-files limit, env_cfg.mp_cfg is
applied as MMEngine applies it, randomness.deterministic wins over env_cfg.cudnn_benchmark,
seeds are checked, the log shows the runtime settings, and a work dir that cannot be made is
named with its cause."""

import errno
import os
from pathlib import Path

import mmengine.runner
import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from runnerx import Config
from runnerx.dist.launch import check_dist_cfg
from runnerx.runner import Runner, environment

ROOT = Path(__file__).resolve().parents[2]


def test_a_misspelt_backend_is_refused_without_a_launcher_too(digits_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dict(backend="glooo"))
    with pytest.raises(ValueError) as caught:
        Runner.from_cfg(digits_cfg)
    message = str(caught.value)
    assert message.startswith(
        "env_cfg.dist_cfg.backend='glooo' is not a torch.distributed backend (known: gloo, nccl"
    )
    assert message.endswith("Did you mean 'gloo'? Leave it out to get nccl on CUDA, gloo on CPU")


def test_a_misspelt_dist_cfg_key_is_refused_with_a_close_match(digits_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dict(bakend="gloo"))
    with pytest.raises(KeyError, match=r"env_cfg\.dist_cfg\.bakend .* did you mean 'backend'"):
        Runner.from_cfg(digits_cfg)


@pytest.mark.parametrize(
    "dist_cfg",
    [
        dict(backend="nccl", timeout=600),  # a GPU cluster's config, run once on a CPU
        dict(backend="cpu:gloo,cuda:nccl"),  # one backend per device
        dict(backend="GLOO", port=29501, init_method="env://"),
    ],
)
def test_the_dist_cfgs_torch_takes_are_accepted(digits_cfg, dist_cfg):
    digits_cfg.env_cfg = dict(dist_cfg=dist_cfg)
    Runner.from_cfg(digits_cfg)


def test_a_backend_a_plugin_registered_is_accepted(monkeypatch):
    backend = dist.Backend
    tables = ("backend_list", "backend_type_map", "backend_capability", "_plugins")
    for table in (*tables, "default_device_backend_map"):
        monkeypatch.setattr(backend, table, type(getattr(backend, table))(getattr(backend, table)))
    monkeypatch.setattr(backend, "PLUGINCCL", None, raising=False)  # removed afterwards
    monkeypatch.delattr(backend, "PLUGINCCL")
    with pytest.raises(ValueError, match="'pluginccl' is not a torch.distributed backend"):
        check_dist_cfg(dict(backend="pluginccl"))
    backend.register_backend("pluginccl", lambda *args: None, devices=["cpu"])
    check_dist_cfg(dict(backend="pluginccl"))


def test_a_work_dir_under_a_file_is_named_with_the_file(digits_cfg, tmp_path):
    (tmp_path / "notes.txt").write_text("")
    digits_cfg.work_dir = str(tmp_path / "notes.txt" / "work")
    with pytest.raises(NotADirectoryError) as caught:
        Runner.from_cfg(digits_cfg)
    assert str(caught.value) == (
        f"work_dir '{tmp_path}/notes.txt/work' (from --work-dir or the config's work_dir) "
        f"cannot be created: '{tmp_path}/notes.txt' is a file, not a folder; choose a folder "
        "you can write to"
    )


def test_an_existing_work_dir_that_takes_no_folder_says_so_and_how_to_test(
    digits_cfg, tmp_path, monkeypatch
):
    work = tmp_path / "run"
    work.mkdir()

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)

    monkeypatch.setattr(environment.os, "makedirs", read_only)
    with pytest.raises(OSError) as caught:
        environment.make_run_dir(str(work))
    assert str(caught.value) == (
        f"work_dir '{work}' (from --work-dir or the config's work_dir) exists but takes no new "
        "folder (Read-only file system), which each run needs for its log; choose a folder you "
        "can write to (to test a checkpoint kept there, give tools/test.py the checkpoint's "
        "path and another --work-dir)"
    )


@pytest.fixture
def resource():
    """The ``resource`` module (not on Windows, where nothing is raised), with this process's
    soft limit of open files lowered to 1024 for the test (the hard limit stays)."""
    resource = pytest.importorskip("resource")
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    if before[1] != resource.RLIM_INFINITY and before[1] < 8192:
        pytest.skip(f"the hard limit of open files ({before[1]}) is too low to raise to")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, before[1]))
    yield resource
    resource.setrlimit(resource.RLIMIT_NOFILE, before)


def test_the_open_files_limit_is_raised_as_mmengine_raises_it(digits_cfg, resource):
    def soft_limit():
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]

    digits_cfg.env_cfg = dict(resource_limit=2048)
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 2048
    digits_cfg.env_cfg = dict(resource_limit=1500)  # never lowered
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 2048
    digits_cfg.env_cfg = dict()
    Runner.from_cfg(digits_cfg)
    assert soft_limit() == 4096  # MMEngine's default
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY:  # never past the hard limit
        environment.raise_open_files_limit(hard + 1)
        assert soft_limit() == hard


def test_a_bad_resource_limit_is_an_error_naming_the_key(digits_cfg):
    digits_cfg.env_cfg = dict(resource_limit="4096")
    with pytest.raises(ValueError, match=r"env_cfg\.resource_limit must be an int >= 0"):
        Runner.from_cfg(digits_cfg)


@pytest.fixture
def process_settings(monkeypatch):
    """Puts back the process-wide settings a Runner's environment set-up changes."""
    for flag in ("benchmark", "deterministic"):
        monkeypatch.setattr(torch.backends.cudnn, flag, getattr(torch.backends.cudnn, flag))
    for variable in ("CUBLAS_WORKSPACE_CONFIG", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, os.environ.get(variable, ""))
        monkeypatch.delenv(variable)  # restored (or removed) afterwards
    algorithms = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    method = mp.get_start_method(allow_none=True)
    cv2 = pytest.importorskip("cv2")
    threads = cv2.getNumThreads()
    yield cv2
    cv2.setNumThreads(threads)
    mp.set_start_method(method, force=True)
    torch.use_deterministic_algorithms(algorithms, warn_only=warn_only)


def log_text(runner):
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def test_deterministic_wins_over_cudnn_benchmark_with_mmengines_warning(
    digits_cfg, process_settings
):
    digits_cfg.env_cfg.cudnn_benchmark = True
    digits_cfg.randomness = dict(seed=3, deterministic=True)
    runner = Runner.from_cfg(digits_cfg)  # wrap_model applies env_cfg's speed switches
    assert torch.backends.cudnn.benchmark is False and torch.backends.cudnn.deterministic
    log = log_text(runner)
    assert (
        "WARNING - torch.backends.cudnn.benchmark is going to be set as `False` to cause "
        "cuDNN to deterministically select an algorithm" in log
    )
    runtime = log.split("Runtime environment:\n")[1].split("\n\n")[0]
    assert runtime.splitlines() == [
        "    cudnn_benchmark: False",
        "    mp_cfg: {'mp_start_method': 'fork', 'opencv_num_threads': 0}",
        "    dist_cfg: {}",
        "    seed: 3",
        "    deterministic: True",
        "    diff_rank_seed: False",
        "    Distributed launcher: none",
        "    Distributed training: False",
        "    world size: 1",
    ]


def test_a_seed_set_later_warns_in_the_open_log(digits_cfg, process_settings):
    runner = Runner.from_cfg(digits_cfg)
    torch.backends.cudnn.benchmark = True
    runner.set_randomness(4, deterministic=True)
    assert "WARNING - torch.backends.cudnn.benchmark is going to be set" in log_text(runner)


def test_opencv_num_threads_reaches_opencv(process_settings):
    cv2 = process_settings
    environment.setup_env(dict(mp_cfg=dict(mp_start_method="fork", opencv_num_threads=3)))
    assert cv2.getNumThreads() == 3


def test_without_mp_cfg_mmengines_defaults_apply_and_replace_a_start_method(
    process_settings, recwarn
):
    cv2 = process_settings
    cv2.setNumThreads(3)
    mp.set_start_method("spawn", force=True)
    environment.setup_env({})
    assert mp.get_start_method() == "fork"
    assert cv2.getNumThreads() == 1  # cv2.setNumThreads(0): no threads of its own
    assert [str(warning.message) for warning in recwarn] == [
        "the multiprocessing start method 'spawn' set before is replaced by "
        "env_cfg.mp_cfg.mp_start_method='fork' ('fork' unless given, as in MMEngine); set that "
        "key to 'spawn' to keep it"
    ]
    assert "OMP_NUM_THREADS" not in os.environ  # not a distributed run


def test_a_distributed_run_gets_one_openmp_and_mkl_thread_unless_set(process_settings):
    os.environ["OMP_NUM_THREADS"] = "4"
    with pytest.warns(UserWarning, match="MKL_NUM_THREADS is not set, so it is set to 1") as got:
        environment.setup_env({}, distributed=True)
    assert (os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"]) == ("4", "1")
    assert len(got) == 1


def test_an_unknown_start_method_names_the_key_and_the_choices(process_settings):
    mp.set_start_method("spawn", force=True)
    torch.backends.cudnn.benchmark = False
    cfg = dict(cudnn_benchmark=True, mp_cfg=dict(mp_start_method="forkk"))
    with pytest.raises(ValueError) as caught:
        environment.setup_env(cfg)
    choices = ", ".join(mp.get_all_start_methods())
    assert str(caught.value) == (
        "env_cfg.mp_cfg.mp_start_method='forkk' is not a start method of this platform "
        f"(choices: {choices}). Did you mean 'fork'?"
    )
    assert (mp.get_start_method(), torch.backends.cudnn.benchmark) == ("spawn", False)


def test_an_unknown_mp_cfg_key_is_refused_before_anything_is_set(process_settings):
    mp.set_start_method(None, force=True)
    torch.backends.cudnn.benchmark = False
    cfg = dict(cudnn_benchmark=True, mp_cfg=dict(mp_start_method="spawn", opencv_threads=0))
    with pytest.raises(KeyError, match=r"env_cfg\.mp_cfg\.opencv_threads .* 'opencv_num_threads'"):
        environment.setup_env(cfg)
    assert mp.get_start_method(allow_none=True) is None
    assert torch.backends.cudnn.benchmark is False


def test_opencv_num_threads_must_be_an_int(process_settings):
    with pytest.raises(TypeError, match=r"env_cfg\.mp_cfg\.opencv_num_threads must be an int"):
        environment.setup_env(dict(mp_cfg=dict(opencv_num_threads="0")))


def test_a_numpy_integer_seed_is_an_int_seed():
    seed = environment.set_random_seed(np.int64(7))
    assert type(seed) is int and seed == 7
    draws = (np.random.rand(), torch.rand(1).item())
    environment.set_random_seed(7)
    assert draws == (np.random.rand(), torch.rand(1).item())


@pytest.mark.parametrize("seed", [-1, 2**32])
def test_a_seed_numpy_cannot_take_is_refused_naming_the_key(seed):
    with pytest.raises(ValueError, match="Seed must be between 0 and 2"):
        mmengine.runner.set_random_seed(seed)  # MMEngine refuses it too, through NumPy
    with pytest.raises(ValueError, match=rf"randomness\.seed must lie in \[0, 2\*\*32\).*{seed}"):
        environment.set_random_seed(seed)


def build_distributed_runner(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), OMP_NUM_THREADS="2")
    os.environ.pop("MKL_NUM_THREADS", None)
    torch.set_num_threads(1)
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir, cfg.launcher = out_dir, "pytorch"
    cfg.env_cfg.dist_cfg = dict(backend="gloo")
    runner = Runner.from_cfg(cfg)
    return os.environ["OMP_NUM_THREADS"], os.environ["MKL_NUM_THREADS"], log_text(runner)


def test_a_distributed_runner_sets_mkl_threads_and_logs_its_runtime(tmp_path, spawn_ranks):
    outcomes = spawn_ranks(build_distributed_runner, tmp_path, 2, timeout=120)
    assert [outcome[:2] for outcome in outcomes] == [("2", "1"), ("2", "1")]
    log = outcomes[0][2]
    assert "WARNING - MKL_NUM_THREADS is not set, so it is set to 1 in each process" in log
    runtime = log.split("Runtime environment:\n")[1].split("\n\n")[0]
    assert runtime.splitlines()[-5:] == [
        "    deterministic: False",
        "    diff_rank_seed: False",
        "    Distributed launcher: pytorch",
        "    Distributed training: True",
        "    world size: 2",
    ]
    assert "    dist_cfg: {'backend': 'gloo'}" in runtime
