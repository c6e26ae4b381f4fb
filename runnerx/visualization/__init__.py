"""MMEngine's ``mmengine.visualization`` path: the Visualizer and the vis backends of
:mod:`runnerx.logging` (the same objects), so that ``from mmengine.visualization import
Visualizer, WandbVisBackend`` ports by renaming ``mmengine`` to ``runnerx``. The trackers'
packages and TensorBoard are imported only when their backend first writes. See docs/logging.md.
"""

from .vis_backend import (
    BaseVisBackend,
    ClearMLVisBackend,
    DVCLiveVisBackend,
    LocalVisBackend,
    MLflowVisBackend,
    TensorboardVisBackend,
    WandbVisBackend,
)
from .visualizer import Visualizer

__all__ = [
    "BaseVisBackend",
    "ClearMLVisBackend",
    "DVCLiveVisBackend",
    "LocalVisBackend",
    "MLflowVisBackend",
    "TensorboardVisBackend",
    "Visualizer",
    "WandbVisBackend",
]
