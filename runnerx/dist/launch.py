"""Starting torch.distributed from what the launcher put in the environment.

* ``pytorch``: torchrun's RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
* ``slurm``: SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODELIST (the master address is
  the first node of the list; the port is MASTER_PORT or 29500);
* ``mpi``: OpenMPI's OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_LOCAL_RANK.

The backend is nccl on CUDA and gloo on CPU unless ``env_cfg.dist_cfg.backend`` says otherwise.
"""

from __future__ import annotations

import datetime
import gc
import os
import re
import subprocess

import torch
import torch.distributed as torch_dist

DEFAULT_PORT = "29500"


def init_dist(
    launcher: str, backend: str | None = None, timeout: int | float = 1800, **kwargs
) -> None:
    """Initialise the default process group for ``launcher`` (pytorch, slurm or mpi).

    ``timeout`` (seconds) bounds how long a collective waits for a rank that died.
    """
    if launcher == "slurm":
        _environment_from_slurm()
    elif launcher == "mpi":
        _environment_from_mpi()
    elif launcher != "pytorch":
        raise ValueError(f"launcher must be pytorch, slurm or mpi to initialise, got {launcher!r}")
    missing = [
        name
        for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
        if name not in os.environ
    ]
    if missing:
        raise RuntimeError(
            f"--launcher {launcher} needs {', '.join(missing)} in the environment; start the "
            f"job with torchrun (pytorch), srun (slurm) or mpirun (mpi)"
        )
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    torch_dist.init_process_group(
        backend=backend, timeout=datetime.timedelta(seconds=timeout), **kwargs
    )


def _environment_from_slurm() -> None:
    os.environ["RANK"] = os.environ["SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
    os.environ["LOCAL_RANK"] = os.environ.get("SLURM_LOCALID", "0")
    os.environ.setdefault("MASTER_PORT", DEFAULT_PORT)
    if "MASTER_ADDR" not in os.environ:
        os.environ["MASTER_ADDR"] = first_slurm_node(os.environ["SLURM_NODELIST"])


def first_slurm_node(nodelist: str) -> str:
    """The first host of a Slurm node list (``node[03-05,7],gpu1`` -> ``node03``)."""
    try:
        shown = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist], capture_output=True, text=True, check=True
        )
        return shown.stdout.split()[0]
    except (OSError, subprocess.CalledProcessError, IndexError):
        match = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist)
        if match is None:
            raise ValueError(f"cannot read the Slurm node list {nodelist!r}") from None
        prefix, ranges = match.groups()
        if not ranges:
            return prefix
        return prefix + ranges.split(",")[0].split("-")[0]


def _environment_from_mpi() -> None:
    os.environ["RANK"] = os.environ["OMPI_COMM_WORLD_RANK"]
    os.environ["WORLD_SIZE"] = os.environ["OMPI_COMM_WORLD_SIZE"]
    os.environ["LOCAL_RANK"] = os.environ.get("OMPI_COMM_WORLD_LOCAL_RANK", "0")
    os.environ.setdefault("MASTER_PORT", DEFAULT_PORT)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")


def shutdown_dist(wait_for_others: bool = True) -> None:
    """Leave the process group cleanly at the end of a job (no-op when there is none);
    ``wait_for_others=False`` after a failure, when the other ranks may never arrive.

    Garbage is collected before and after: what still refers to the group (a DDP or FSDP
    model the caller has let go of, gloo's pending work objects) is then freed while the
    interpreter is whole, not while it shuts down, which can crash the process.
    """
    if torch_dist.is_available() and torch_dist.is_initialized():
        gc.collect()
        if wait_for_others:
            torch_dist.barrier()
        torch_dist.destroy_process_group()
        gc.collect()
