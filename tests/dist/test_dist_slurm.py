"""The slurm launcher under a real single-node Slurm (munge, slurmctld, slurmd; see
conftest.py): ``srun -n 2 python tools/train.py ... --launcher slurm``, tools/slurm_test.sh on
its checkpoint, and a batch job that Slurm warns with SIGUSR1 (``scancel --signal=USR1``),
which saves a checkpoint, requeues itself and resumes exactly."""

import re
import subprocess
import time
from pathlib import Path

import pytest
import torch

from runnerx.checkpoint.io import load_checkpoint

ROOT = Path(__file__).parents[2]
EPOCHS = 3
TRAIN_ARGS = [
    "configs/digits_convnet.py",
    "--cfg-options",
    f"train_cfg.max_epochs={EPOCHS}",
    f"param_scheduler.1.end={EPOCHS}",
    "default_hooks.logger.interval=1",
]
SCRIPT_ENV = dict(GPUS="2", GPUS_PER_NODE="2", CPUS_PER_TASK="1", GRES="none")
# A hook that only sleeps, so that the batch job is still training when the signal comes.
PACING = """
import time
from runnerx import HOOKS
from runnerx.hooks import Hook


@HOOKS.register_module()
class PaceHook(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        time.sleep(0.2)
"""


@pytest.fixture(scope="module")
def run(run_in_repo):
    """``run(command, env, timeout=300, **extra_env)``: run ``command`` in the repository root
    with ``env`` and ``extra_env``; fail with its output unless it succeeds, else return it."""

    def run_ok(command, env, timeout=300, **extra_env) -> str:
        done = run_in_repo(command, env=dict(env, **extra_env), timeout=timeout)
        assert done.returncode == 0, (
            f"{command} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
        return done.stdout + done.stderr

    return run_ok


def final_weights(work_dir: Path) -> dict:
    return load_checkpoint(work_dir / f"epoch_{EPOCHS}.pth")["state_dict"]


@pytest.fixture(scope="module")
def srun_run(slurm_env, tmp_path_factory, free_port, run):
    """An uninterrupted 2-task training started with srun: (work dir, output)."""
    work = tmp_path_factory.mktemp("srun") / "work"
    output = run(
        [
            *("srun", "-n", "2", "python", "tools/train.py", TRAIN_ARGS[0]),
            *("--launcher", "slurm", "--work-dir", str(work), *TRAIN_ARGS[1:]),
        ],
        slurm_env,
        MASTER_PORT=str(free_port()),
    )
    return work, output


def test_srun_starts_two_ranks_that_train_together(srun_run):
    work, output = srun_run
    assert "world size: 2" in output
    # 1437 samples, batch 64 per rank: 12 iterations per rank and epoch (23 in one process)
    assert re.search(r"Epoch\(train\) \[1\]\[12/12\]", output)
    assert (work / f"epoch_{EPOCHS}.pth").is_file()


def test_slurm_test_sh_evaluates_the_checkpoint(srun_run, slurm_env, free_port, tmp_path, run):
    work, output = srun_run
    trained = float(re.findall(r"accuracy/top1: ([0-9.]+)", output)[-1])
    tested_output = run(
        [
            *("bash", "tools/slurm_test.sh", "debug", "test", TRAIN_ARGS[0]),
            *(str(work / f"epoch_{EPOCHS}.pth"), "--work-dir", str(tmp_path)),
        ],
        slurm_env,
        MASTER_PORT=str(free_port()),
        **SCRIPT_ENV,
    )
    tested = float(re.findall(r"accuracy/top1: ([0-9.]+)", tested_output)[-1])
    assert "world size: 2" in tested_output
    assert tested == pytest.approx(trained, abs=1e-4)


def scontrol_show(job: str, env: dict) -> dict:
    shown = subprocess.run(
        ["scontrol", "show", "job", job], env=env, capture_output=True, text=True, check=True
    )
    return dict(re.findall(r"(\w+)=(\S*)", shown.stdout))


def wait_for(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}")


def test_a_job_warned_with_sigusr1_requeues_itself_and_resumes_exactly(
    srun_run, slurm_env, free_port, tmp_path, run
):
    work = tmp_path / "work"
    log = tmp_path / "job.out"
    (tmp_path / "pacing.py").write_text(PACING)
    config = tmp_path / "paced.py"
    config.write_text(
        f"_base_ = {str(ROOT / TRAIN_ARGS[0])!r}\n"
        "custom_imports = dict(imports=['pacing'])\n"
        "custom_hooks = [dict(type='PaceHook')]\n"
    )
    train = f"bash tools/slurm_train.sh debug preempted {config} {work}"
    script = tmp_path / "job.sh"
    script.write_text(
        "#!/usr/bin/env bash\n"
        f"#SBATCH --ntasks=2 --cpus-per-task=1 --requeue --open-mode=append --output={log}\n"
        f"cd {ROOT}\n"
        f"{train} --resume {' '.join(TRAIN_ARGS[1:])}\n"
    )
    env = dict(slurm_env, MASTER_PORT=str(free_port()), PYTHONPATH=str(tmp_path), **SCRIPT_ENV)
    job = run(["sbatch", "--parsable", str(script)], env).strip()

    wait_for(lambda: log.is_file() and "Epoch(train)" in log.read_text(), 120, "training")
    run(["scancel", "--signal=USR1", job], env)
    wait_for(lambda: scontrol_show(job, env).get("Restarts") == "1", 120, "the requeue")

    hurried = []

    def finished() -> str | None:
        shown = scontrol_show(job, env)
        if shown["JobState"] == "PENDING" and shown.get("Reason") == "BeginTime" and not hurried:
            # Slurm holds a requeued job back for about two minutes (until the revoked launch
            # credential expires): let it start in a few seconds instead. Not "now": slurmd
            # refuses a credential made in the second it revoked the old one ("Job credential
            # revoked"), and the job would fail before any Python runs.
            run(["scontrol", "update", f"JobId={job}", "StartTime=now+3"], env)
            hurried.append(True)
        return shown["JobState"] if shown["JobState"] in ("COMPLETED", "FAILED") else None

    state = wait_for(finished, 240, "the requeued job to end")
    output = log.read_text()
    assert state == "COMPLETED", output[-4000:]
    saved = re.search(r"SIGUSR1 received: saving a checkpoint at (\d+) iterations", output)
    assert saved, output[-4000:]
    assert f"Requeued the Slurm job {job}" in output
    assert f"resumed from {work / f'iter_{saved[1]}.pth'}" in output

    expected, actual = final_weights(srun_run[0]), final_weights(work)
    assert expected.keys() == actual.keys()
    for key, value in expected.items():
        assert torch.equal(value, actual[key]), f"{key} differs after the requeue"
