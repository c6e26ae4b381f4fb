"""``set_multi_processing``: MMEngine's multi-processing settings for a training process, which
the Runner applies from ``env_cfg.mp_cfg``."""

from __future__ import annotations

import multiprocessing
import numbers
import os
import platform
import warnings

from runnerx.suggest import SENTENCE, did_you_mean

_KEY = "env_cfg.mp_cfg"
#: MMEngine's ``mp_cfg`` defaults, the keywords of :func:`set_multi_processing` but the last
MP_CFG_DEFAULTS = {"mp_start_method": "fork", "opencv_num_threads": 0}


def set_multi_processing(
    mp_start_method: str = MP_CFG_DEFAULTS["mp_start_method"],
    opencv_num_threads: int = MP_CFG_DEFAULTS["opencv_num_threads"],
    distributed: bool = False,
) -> None:
    """Set the start method of worker processes (not on Windows), OpenCV's thread count
    (``cv2.setNumThreads``, when OpenCV is installed) and, in a distributed run,
    ``OMP_NUM_THREADS`` and ``MKL_NUM_THREADS`` to 1 where they are unset, with a warning.

    As in MMEngine, a start method set before is replaced, with a warning. Both values are
    checked before anything is set.
    """
    _check(mp_start_method, opencv_num_threads)
    if platform.system() != "Windows":
        import torch.multiprocessing as mp

        current = mp.get_start_method(allow_none=True)
        if current is not None and current != mp_start_method:
            warnings.warn(
                f"the multiprocessing start method {current!r} set before is replaced by "
                f"{_KEY}.mp_start_method={mp_start_method!r} ('fork' unless given, as in "
                f"MMEngine); set that key to {current!r} to keep it",
                stacklevel=2,
            )
        mp.set_start_method(mp_start_method, force=True)
    try:
        import cv2
    except ImportError:
        pass
    else:
        cv2.setNumThreads(int(opencv_num_threads))  # threads in every worker overload a machine
    if distributed:
        for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            if variable not in os.environ:
                warnings.warn(
                    f"{variable} is not set, so it is set to 1 in each process, as MMEngine "
                    "does in a distributed run (many processes with many threads each "
                    "overload a machine); set it yourself to tune it",
                    stacklevel=2,
                )
                os.environ[variable] = "1"


def _check(mp_start_method: str, opencv_num_threads: int) -> None:
    """Refuse a start method this platform lacks (Windows sets none) and a thread count that
    is no int, naming the config key."""
    choices = multiprocessing.get_all_start_methods()
    if platform.system() != "Windows" and mp_start_method not in choices:
        hint = did_you_mean(mp_start_method, choices, form=SENTENCE)
        raise ValueError(
            f"{_KEY}.mp_start_method={mp_start_method!r} is not a start method of this platform "
            f"(choices: {', '.join(choices)}).{hint}"
        )
    if isinstance(opencv_num_threads, bool) or not isinstance(opencv_num_threads, numbers.Integral):
        raise TypeError(
            f"{_KEY}.opencv_num_threads must be an int (0: OpenCV runs single-threaded in each "
            f"process), got {opencv_num_threads!r}"
        )
