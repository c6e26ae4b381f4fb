"""The accelerator queries, at MMEngine's path ``mmengine.device.utils``: which accelerator
this machine has and the peak memory tensors took on it. runnerx runs on CUDA, Apple's MPS or
the CPU; the NPU, MLU, DIPU and MUSA queries answer False."""

from __future__ import annotations

import torch

__all__ = [
    "get_device",
    "get_max_cuda_memory",
    "get_max_musa_memory",
    "is_cuda_available",
    "is_dipu_available",
    "is_mlu_available",
    "is_mps_available",
    "is_musa_available",
    "is_npu_available",
    "is_npu_support_full_precision",
]


def is_cuda_available() -> bool:
    """Whether a CUDA device is present (``torch.cuda.is_available()``)."""
    return torch.cuda.is_available()


def is_mps_available() -> bool:
    """Whether Apple's MPS backend is present."""
    return torch.backends.mps.is_available()


def is_npu_available() -> bool:
    """False: runnerx does not run on Ascend NPUs (MMEngine asks ``torch_npu``)."""
    return False


def is_mlu_available() -> bool:
    """False: runnerx does not run on Cambricon MLUs."""
    return False


def is_dipu_available() -> bool:
    """False: runnerx does not run on DIPU devices."""
    return False


def is_musa_available() -> bool:
    """False: runnerx does not run on Moore Threads MUSA GPUs."""
    return False


def is_npu_support_full_precision() -> bool:
    """False, as there is no NPU (MMEngine asks the NPU's chip version)."""
    return False


def get_device() -> str:
    """The accelerator this machine has, as MMEngine names it: ``'cuda'``, else ``'mps'``,
    else ``'cpu'``."""
    if is_cuda_available():
        return "cuda"
    if is_mps_available():
        return "mps"
    return "cpu"


def get_max_cuda_memory(device: torch.device | int | str | None = None) -> int:
    """The most memory tensors have taken on ``device`` (the current CUDA device by default)
    since the last call, or since the start, in MB; each call starts a new peak, as in
    MMEngine (which resets the current device's, whichever ``device`` was asked about)."""
    peak = torch.cuda.max_memory_allocated(device)
    torch.cuda.reset_peak_memory_stats(device)
    return peak // 2**20


def get_max_musa_memory(device: torch.device | int | str | None = None) -> int:
    """MMEngine's peak-memory query for MUSA GPUs, which runnerx does not run on: raises
    RuntimeError (check :func:`is_musa_available` first, as MMEngine's callers do)."""
    raise RuntimeError(
        "get_max_musa_memory: runnerx does not run on MUSA devices (is_musa_available() is "
        "False); use get_max_cuda_memory on CUDA"
    )
