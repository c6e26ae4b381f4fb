"""MMEngine's ``mmengine.visualization.vis_backend`` path: runnerx's vis backends (see
:mod:`runnerx.logging.vis_backends`; the trackers' packages are imported when their backend
first writes)."""

from runnerx.logging.vis_backends import BaseVisBackend, LocalVisBackend, TensorboardVisBackend
from runnerx.logging.vis_backends_external import MLflowVisBackend, WandbVisBackend
from runnerx.logging.vis_backends_trackers import ClearMLVisBackend, DVCLiveVisBackend

__all__ = [
    "BaseVisBackend",
    "ClearMLVisBackend",
    "DVCLiveVisBackend",
    "LocalVisBackend",
    "MLflowVisBackend",
    "TensorboardVisBackend",
    "WandbVisBackend",
]
