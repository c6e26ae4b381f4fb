"""``collect_env``: the versions, devices and compilers of this machine, for bug reports and
the top of a log (MMEngine's keys, with ``runnerx`` in place of ``MMEngine``)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections import defaultdict


def collect_env() -> dict[str, object]:
    """The environment as an ordered dict of printable values.

    Keys: ``sys.platform``, ``Python``, ``CUDA available``, ``numpy_random_seed``, one
    ``GPU <ids>`` per GPU model, ``CUDA_HOME`` and ``NVCC`` (where CUDA is available), ``GCC``,
    ``PyTorch``, ``PyTorch compiling details``, ``TorchVision`` and ``OpenCV`` (where
    installed) and ``runnerx``. Programs such as nvcc and gcc are run here.

    .. code-block:: python

        for name, value in collect_env().items():
            print(f'{name}: {value}')
    """
    import numpy as np
    import torch

    from runnerx.version import __version__

    env: dict[str, object] = {
        "sys.platform": sys.platform,
        "Python": sys.version.replace("\n", ""),
    }
    cuda_available = torch.cuda.is_available()
    env["CUDA available"] = cuda_available
    env["numpy_random_seed"] = np.random.get_state()[1][0]
    if cuda_available:
        ids_by_model = defaultdict(list)
        for index in range(torch.cuda.device_count()):
            ids_by_model[torch.cuda.get_device_name(index)].append(str(index))
        for model, ids in ids_by_model.items():
            env[f"GPU {','.join(ids)}"] = model
        cuda_home = _cuda_home()
        env["CUDA_HOME"] = cuda_home
        if cuda_home is not None and os.path.isdir(cuda_home):
            env["NVCC"] = _compiler_version(cuda_home)
    compiler = _c_compiler()
    env["GCC"] = _first_line([compiler, "--version"]) if compiler else "n/a"
    env["PyTorch"] = torch.__version__
    env["PyTorch compiling details"] = torch.__config__.show()
    for key, module in (("TorchVision", "torchvision"), ("OpenCV", "cv2")):
        try:
            env[key] = __import__(module).__version__
        except ImportError:
            pass
        except Exception as error:  # installed but broken (a build for another torch)
            env[key] = f"does not import ({type(error).__name__}: {error})"
    env["runnerx"] = __version__
    return env


def _cuda_home() -> str | None:
    """CUDA's (or, for a ROCm build of torch, ROCm's) folder as torch's extension builder
    finds it."""
    import torch
    from torch.utils import cpp_extension

    return cpp_extension.ROCM_HOME if torch.version.hip else cpp_extension.CUDA_HOME


def _compiler_version(cuda_home: str) -> str:
    """nvcc's release line (hipcc's version line under ROCm), or 'Not Available'."""
    hipcc = os.path.join(cuda_home, "hip", "bin", "hipcc")
    if os.path.isfile(hipcc):
        output = _output([hipcc, "--version"])
        marker = "HIP version:"
    else:
        output = _output([os.path.join(cuda_home, "bin", "nvcc"), "-V"])
        marker = "Cuda compilation tools"
    lines = [line for line in output.splitlines() if line.startswith(marker)]
    return lines[0].strip() if lines else "Not Available"


def _c_compiler() -> str | None:
    """The C compiler Python was built with (``gcc`` from ``CC='gcc -pthread'``)."""
    compiler = sysconfig.get_config_var("CC")
    return os.path.basename(compiler.split()[0]) if compiler else None


def _first_line(command: list) -> str:
    return _output(command).partition("\n")[0].strip() or "n/a"


def _output(command: list) -> str:
    """What ``command`` prints, '' when it cannot run or fails."""
    try:
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
