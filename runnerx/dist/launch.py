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
import inspect
import os
import re
import subprocess
from collections.abc import Mapping
from typing import Any

import torch
import torch.distributed as torch_dist

from runnerx.suggest import SENTENCE, did_you_mean

from . import utils

DEFAULT_PORT = "29500"


def infer_launcher() -> str:
    """The launcher this process was started by, read from its environment as MMEngine does:
    'pytorch' (torchrun's WORLD_SIZE), 'slurm' (SLURM_NTASKS), 'mpi'
    (OMPI_COMM_WORLD_LOCAL_RANK) or 'none'."""
    if "WORLD_SIZE" in os.environ:
        return "pytorch"
    if "SLURM_NTASKS" in os.environ:
        return "slurm"
    if "OMPI_COMM_WORLD_LOCAL_RANK" in os.environ:
        return "mpi"
    return "none"


def check_dist_cfg(dist_cfg: Any, where: str = "env_cfg.dist_cfg") -> None:
    """Refuse a ``dist_cfg`` that :func:`init_dist` would fail on, or silently ignore: a key
    neither it nor ``init_process_group`` takes, or a backend torch does not know. The Runner
    checks it for every launcher, ``none`` too, so that a typo does not wait for the cluster.
    """
    if not isinstance(dist_cfg, Mapping):
        raise TypeError(f"{where} must be a dict, e.g. dict(backend='nccl'), got {dist_cfg!r}")
    if not torch_dist.is_available():
        return
    takes = [
        *inspect.signature(init_dist).parameters,
        *inspect.signature(torch_dist.init_process_group).parameters,  # what kwargs go to
    ]
    takes = [n for n in dict.fromkeys(takes) if n not in ("launcher", "kwargs") and n[0] != "_"]
    for key in dist_cfg:
        if key not in takes:
            hint = did_you_mean(key, takes)
            raise KeyError(f"{where}.{key} is not a known key (known: {', '.join(takes)}){hint}")
    if dist_cfg.get("backend") is not None:
        check_backend(dist_cfg["backend"], f"{where}.backend")


def check_backend(backend: Any, where: str = "backend") -> None:
    """Refuse a backend that torch.distributed does not know (one a plugin registered with
    ``Backend.register_backend`` is known); ``'cpu:gloo,cuda:nccl'`` names one per device."""
    known = [name for name in torch_dist.Backend.backend_list if name != "undefined"]
    names = backend.split(",") if isinstance(backend, str) else [backend]
    for name in names:
        name = name.rpartition(":")[2].strip().lower() if isinstance(name, str) else name
        if name not in known:
            hint = did_you_mean(name, known, form=SENTENCE)
            raise ValueError(
                f"{where}={backend!r} is not a torch.distributed backend (known: "
                f"{', '.join(known)}).{hint} Leave it out to get nccl on CUDA, gloo on CPU"
            )


def init_dist(
    launcher: str,
    backend: str | None = None,
    init_backend: str = "torch",
    *,
    timeout: int | float | None = 1800,
    port: int | None = None,
    **kwargs,
) -> None:
    """Initialise the default process group for ``launcher`` (pytorch, slurm or mpi).

    ``backend`` defaults to nccl on CUDA and gloo otherwise (MMEngine's default is always
    nccl). ``timeout`` (seconds; None: torch's default) bounds how long a collective waits
    for a rank that died; ``port`` (slurm only) is the master port, before ``MASTER_PORT``
    and 29500. The other keyword arguments go to ``torch.distributed.init_process_group``;
    ``rank=``, ``world_size=`` and ``init_method=`` among them stand in for RANK, WORLD_SIZE
    and MASTER_ADDR/MASTER_PORT, as in ``init_dist('pytorch', rank=rank, world_size=2)`` in
    processes a test spawned.
    ``init_backend`` is accepted for MMEngine's calls; only 'torch' is supported.

    .. code-block:: python

        init_dist(infer_launcher(), backend='gloo')   # under torchrun, srun or mpirun
    """
    if launcher not in ("pytorch", "slurm", "mpi"):
        raise ValueError(f"launcher must be pytorch, slurm or mpi to initialise, got {launcher!r}")
    if timeout is not None and not isinstance(timeout, (int, float)):
        raise TypeError(
            f"timeout must be a number of seconds, e.g. env_cfg=dict(dist_cfg=dict("
            f"timeout=1800)), but got {timeout!r}"
        )
    if init_backend != "torch":
        raise ValueError(
            f"init_backend must be 'torch' (runnerx does not start DeepSpeed or ColossalAI), "
            f"but got {init_backend!r}"
        )
    if backend is not None:
        check_backend(backend)
    if port is not None and launcher != "slurm":
        raise ValueError(
            f"port is only for launcher='slurm' (the others take MASTER_PORT from the "
            f"environment), but launcher={launcher!r}"
        )
    if launcher == "slurm":
        if port is not None:
            os.environ["MASTER_PORT"] = str(port)
        _environment_from_slurm()
    elif launcher == "mpi":
        _environment_from_mpi()
    # what init_process_group is given stands in for the environment
    given = {
        "RANK": "rank",
        "WORLD_SIZE": "world_size",
        "MASTER_ADDR": "init_method",
        "MASTER_PORT": "init_method",
    }
    missing = [
        name
        for name, argument in given.items()
        if name not in os.environ and argument not in kwargs
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
    if timeout is not None:
        kwargs["timeout"] = datetime.timedelta(seconds=timeout)
    torch_dist.init_process_group(backend=backend, **kwargs)


def _require_launcher_variables(launcher: str, names: list[str], how: str) -> None:
    """Refuse to start when ``launcher`` did not set ``names`` (the job was not started by
    it): say which are missing and how to start the job."""
    missing = [name for name in names if name not in os.environ]
    if missing:
        raise RuntimeError(
            f"--launcher {launcher} needs {', '.join(missing)} in the environment: {how}"
        )


def _environment_from_slurm() -> None:
    needed = ["SLURM_PROCID", "SLURM_NTASKS"]
    if "MASTER_ADDR" not in os.environ:
        needed.append("SLURM_NODELIST")
    _require_launcher_variables(
        "slurm",
        needed,
        "start the job with srun (bash tools/slurm_train.sh PARTITION JOB_NAME CONFIG), or "
        "use --launcher pytorch under torchrun (bash tools/dist_train.sh CONFIG NPROC)",
    )
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
    _require_launcher_variables(
        "mpi",
        ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"],
        "start the job with mpirun (OpenMPI: mpirun -n 2 python tools/train.py CONFIG "
        "--launcher mpi), or use --launcher pytorch under torchrun (bash tools/dist_train.sh "
        "CONFIG NPROC)",
    )
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
        utils._local_group = None  # made in the group that ends here
        torch_dist.destroy_process_group()
        gc.collect()
