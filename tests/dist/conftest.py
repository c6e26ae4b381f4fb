"""A real single-node Slurm for the tests of the slurm launcher (see slurm_cluster.sh)."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

CLUSTER_SCRIPT = Path(__file__).with_name("slurm_cluster.sh")


def _unavailable(reason: str) -> None:
    """Skip, unless the run demands Slurm (CI sets RUNNERX_REQUIRE_SLURM=1): then fail."""
    if os.environ.get("RUNNERX_REQUIRE_SLURM") == "1":
        pytest.fail(f"Slurm is required (RUNNERX_REQUIRE_SLURM=1) but {reason}")
    pytest.skip(reason)


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


@pytest.fixture(scope="session")
def slurm_env(tmp_path_factory, run_in_repo):
    """The environment in which ``srun``/``sbatch`` reach a Slurm started for this session
    (installed first with apt-get when missing and this is root)."""
    if os.geteuid() != 0:
        _unavailable("starting slurmd and munged needs root")
    if shutil.which("slurmctld") is None:
        if shutil.which("apt-get") is None:
            _unavailable("Slurm is not installed (Debian: apt-get install slurm-wlm munge)")
        subprocess.run(["bash", str(CLUSTER_SCRIPT), "install"], check=True, timeout=900)
    state = tmp_path_factory.mktemp("slurm")
    ctld_port, slurmd_port = _free_ports(2)
    env = dict(os.environ, SLURMCTLD_PORT=str(ctld_port), SLURMD_PORT=str(slurmd_port))
    started = run_in_repo(["bash", str(CLUSTER_SCRIPT), "start", str(state)], env=env, timeout=120)
    if started.returncode != 0:
        pytest.fail(f"the test Slurm did not start:\n{started.stdout}\n{started.stderr}")
    env["SLURM_CONF"] = str(state / "slurm.conf")
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"  # this venv's python in jobs
    env["OMP_NUM_THREADS"] = "1"
    yield env
    subprocess.run(["bash", str(CLUSTER_SCRIPT), "stop", str(state)], timeout=60, check=False)
