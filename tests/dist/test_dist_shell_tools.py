"""tools/dist_*.sh and tools/slurm_*.sh: a call with arguments missing, swapped or not a number
gets the script's usage line and what is wrong (exit 2), not bash's ``$2: unbound variable``
or torchrun's traceback; a right call reaches torchrun / srun with the arguments in place
(stand-ins for python and srun that print what they were given), with the project root
first on PYTHONPATH."""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

USAGES = {
    "dist_train.sh": "bash tools/dist_train.sh CONFIG NPROC [train.py args...]",
    "dist_test.sh": "bash tools/dist_test.sh CONFIG CHECKPOINT NPROC [test.py args...]",
    "slurm_train.sh": (
        "bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG [WORK_DIR] [train.py args...]"
    ),
    "slurm_test.sh": (
        "bash tools/slurm_test.sh PARTITION JOB_NAME CONFIG CHECKPOINT [test.py args...]"
    ),
}


@pytest.mark.parametrize(
    "script, args, environment, problem",
    [
        ("dist_train.sh", [], {}, "CONFIG and NPROC are missing (got 0 of the 2 arguments)"),
        ("dist_train.sh", ["configs/x.py"], {}, "NPROC is missing (got 1 of the 2 arguments)"),
        (
            "dist_train.sh",
            ["2", "configs/digits_convnet.py", "--work-dir", "w"],
            {},
            "NPROC must be a number, got NPROC='configs/digits_convnet.py': the arguments may "
            "be swapped",
        ),
        ("dist_train.sh", ["configs/x.py", "two"], {}, "NPROC must be a number, got NPROC='two'"),
        ("dist_train.sh", ["configs/x.py", "0"], {}, "NPROC must be a number, got NPROC='0'"),
        (
            "dist_test.sh",
            ["configs/x.py", "2", "work/epoch_1.pth"],
            {},
            "NPROC must be a number, got NPROC='work/epoch_1.pth': the arguments may be swapped",
        ),
        (
            "dist_test.sh",
            ["configs/x.py", "work/epoch_1.pth"],
            {},
            "NPROC is missing (got 2 of the 3 arguments)",
        ),
        (
            "dist_test.sh",
            ["configs/x.py", "2"],
            {},
            "CHECKPOINT is missing (got 2 of the 3 arguments; '2' is taken as NPROC)",
        ),
        (
            "dist_train.sh",
            ["2"],
            {},
            "CONFIG is missing (got 1 of the 2 arguments; '2' is taken as NPROC)",
        ),
        (
            "slurm_train.sh",
            ["configs/x.py"],
            {},
            "JOB_NAME and CONFIG are missing (got 1 of the 3 arguments)",
        ),
        (
            "slurm_train.sh",
            ["gpu", "job", "configs/x.py"],
            {"GPUS": "eight"},
            "GPUS (from the environment) must be a number, got GPUS='eight'",
        ),
        (
            "slurm_test.sh",
            ["gpu", "job", "configs/x.py"],
            {},
            "CHECKPOINT is missing (got 3 of the 4 arguments)",
        ),
        (
            "slurm_test.sh",
            ["gpu", "job", "configs/x.py", "w/epoch_1.pth"],
            {"CPUS_PER_TASK": "4.5"},
            "CPUS_PER_TASK (from the environment) must be a number, got CPUS_PER_TASK='4.5'",
        ),
    ],
)
def test_a_wrong_call_prints_the_usage_line_and_what_is_wrong(
    run_in_repo, script, args, environment, problem
):
    env = {**os.environ, **environment}
    result = run_in_repo(["bash", f"tools/{script}", *args], env=env, timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"usage: {USAGES[script]}\n{script}: {problem}\n"
    assert result.stdout == ""


@pytest.mark.parametrize("script", sorted(USAGES))
def test_help_prints_the_usage_line_and_the_environment_it_reads(run_in_repo, script):
    result = run_in_repo(["bash", f"tools/{script}", "--help"], timeout=30)
    assert result.returncode == 0 and result.stdout.startswith(f"usage: {USAGES[script]}\n")
    names = [line.split("=")[0].strip() for line in result.stdout.splitlines()[2:]]
    if script.startswith("dist"):
        assert names == ["NNODES", "NODE_RANK", "MASTER_ADDR", "PORT"]
    else:
        assert names == ["GPUS", "GPUS_PER_NODE", "CPUS_PER_TASK", "GRES", "SRUN_ARGS"]


def test_a_missing_config_is_one_line_on_each_rank(run_in_repo, dist_train_env, tmp_path):
    env = dist_train_env(tmp_path)
    args = ["bash", "tools/dist_train.sh", "configs/nope.py", "2"]
    result = run_in_repo(args, env=env, timeout=120)
    assert result.returncode == 1
    line = f"tools/train.py: config file not found: {ROOT / 'configs/nope.py'}\n"
    assert result.stderr.count(line) == 2, result.stderr
    assert "ConfigFileNotFoundError" not in result.stderr


@pytest.fixture
def stand_ins(tmp_path):
    """An environment whose ``python`` and ``srun`` print their arguments, one a line."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("python", "srun"):
        (folder / name).write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
        (folder / name).chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.parametrize(
    "script, args, launcher_option, tool_args",
    [
        (
            "dist_train.sh",
            ["c.py", "2", "--work-dir", "w w"],
            "--nproc_per_node=2",
            ["tools/train.py", "c.py", "--work-dir", "w w"],
        ),
        ("dist_train.sh", ["c.py", "auto"], "--nproc_per_node=auto", ["tools/train.py", "c.py"]),
        (
            "dist_test.sh",
            ["c.py", "e.pth", "4", "--out", "p.pkl"],
            "--nproc_per_node=4",
            ["tools/test.py", "c.py", "e.pth", "--out", "p.pkl"],
        ),
        (
            "slurm_train.sh",
            ["gpu", "job", "c.py", "work", "--resume"],
            "--partition=gpu",
            ["tools/train.py", "c.py", "--work-dir", "work", "--resume"],
        ),
        (
            "slurm_test.sh",
            ["gpu", "job", "c.py", "e.pth", "--tta"],
            "--job-name=job",
            ["tools/test.py", "c.py", "e.pth", "--tta"],
        ),
    ],
)
def test_a_right_call_passes_its_arguments_on(
    run_in_repo, stand_ins, script, args, launcher_option, tool_args
):
    result = run_in_repo(["bash", f"tools/{script}", *args], env=stand_ins, timeout=30)
    assert result.returncode == 0, result.stderr
    given = result.stdout.splitlines()
    launcher = "pytorch" if script.startswith("dist") else "slurm"
    assert given[-len(tool_args) - 2 :] == [*tool_args, "--launcher", launcher]
    assert launcher_option in given[: -len(tool_args) - 2]


@pytest.mark.parametrize(
    "script, args",
    [("dist_train.sh", ["c.py", "1"]), ("slurm_test.sh", ["gpu", "job", "c.py", "e.pth"])],
)
@pytest.mark.parametrize("user_path", [None, "/opt/mine"])
def test_the_project_root_comes_first_on_pythonpath(run_in_repo, tmp_path, script, args, user_path):
    """As OpenMMLab's scripts do: the folder above tools/ is importable (a project's modules
    named by custom_imports), before anything the user set."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("python", "srun"):
        (folder / name).write_text('#!/bin/sh\nprintf "PYTHONPATH=%s\\n" "$PYTHONPATH"\n')
        (folder / name).chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    if user_path:
        env["PYTHONPATH"] = user_path
    result = run_in_repo(["bash", f"tools/{script}", *args], env=env, timeout=30)
    assert result.returncode == 0, result.stderr
    expected = str(ROOT) + (f":{user_path}" if user_path else "")
    assert result.stdout.splitlines() == [f"PYTHONPATH={expected}"]
