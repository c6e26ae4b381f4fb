"""MMEngine's ``mmengine.device`` queries, for code that asks which accelerator there is::

    from runnerx.device import get_device, get_max_cuda_memory

    device = get_device()  # 'cuda', 'mps' or 'cpu'
    if device == 'cuda':
        print(f'peak memory: {get_max_cuda_memory()} MB')

runnerx runs on CUDA, Apple's MPS or the CPU; the NPU, MLU, DIPU and MUSA queries answer False.
The functions live in :mod:`runnerx.device.utils` (MMEngine's file name).
"""

from .utils import (
    get_device,
    get_max_cuda_memory,
    get_max_musa_memory,
    is_cuda_available,
    is_dipu_available,
    is_mlu_available,
    is_mps_available,
    is_musa_available,
    is_npu_available,
    is_npu_support_full_precision,
)

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
