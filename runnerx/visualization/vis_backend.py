"""MMEngine's ``mmengine.visualization.vis_backend`` path: runnerx's vis backends (see
:mod:`runnerx.logging.vis_backends`; wandb and mlflow are imported when their backend first
writes)."""

from runnerx.logging.vis_backends import BaseVisBackend, LocalVisBackend, TensorboardVisBackend
from runnerx.logging.vis_backends_external import MLflowVisBackend, WandbVisBackend

__all__ = [
    "BaseVisBackend",
    "LocalVisBackend",
    "MLflowVisBackend",
    "TensorboardVisBackend",
    "WandbVisBackend",
]
