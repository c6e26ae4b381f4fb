"""``set_multi_processing``: MMEngine's multi-processing settings for a training process."""

from __future__ import annotations

import os
import platform
import warnings


def set_multi_processing(
    mp_start_method: str = "fork", opencv_num_threads: int = 0, distributed: bool = False
) -> None:
    """Set the start method of worker processes (not on Windows), OpenCV's thread count
    (when OpenCV is installed) and, in a distributed run, ``OMP_NUM_THREADS`` and
    ``MKL_NUM_THREADS`` to 1 unless they are set.

    As in MMEngine, a start method set before is replaced, with a warning.
    """
    if platform.system() != "Windows":
        import torch.multiprocessing as mp

        current = mp.get_start_method(allow_none=True)
        if current is not None and current != mp_start_method:
            warnings.warn(
                f"set_multi_processing: replacing the start method {current!r} set before "
                f"with mp_start_method={mp_start_method!r} (env_cfg.mp_cfg.mp_start_method "
                "in a config)",
                stacklevel=2,
            )
        mp.set_start_method(mp_start_method, force=True)
    try:
        import cv2
    except ImportError:
        pass
    else:
        cv2.setNumThreads(opencv_num_threads)  # many busy threads per worker overload a machine
    if distributed:
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if variable not in os.environ:
                warnings.warn(
                    f"set_multi_processing: {variable} is not set, so it is set to 1 in each "
                    "process (many processes with many threads each overload a machine); set "
                    "it yourself to tune it",
                    stacklevel=2,
                )
                os.environ[variable] = "1"
