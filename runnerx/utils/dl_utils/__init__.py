"""MMEngine's ``mmengine.utils.dl_utils`` without mmcv: ``collect_env``, ``TORCH_VERSION``,
``set_multi_processing``, ``has_batch_norm``, ``is_norm``, ``tensor2imgs``, ``load_url``,
``TimeCounter``, ``torch_meshgrid``, ``is_jit_tracing``, ``mmcv_full_available``.

Submodules at MMEngine's paths: ``parrots_wrapper`` (torch's norm, conv and pooling bases
such as ``_BatchNorm``) and ``trace``. Importing this package imports torch.
"""

from .collect_env import collect_env
from .hub import load_url
from .misc import has_batch_norm, is_norm, mmcv_full_available, tensor2imgs
from .setup_env import set_multi_processing
from .time_counter import TimeCounter
from .torch_ops import TORCH_VERSION, is_jit_tracing, torch_meshgrid

__all__ = [
    "TORCH_VERSION",
    "TimeCounter",
    "collect_env",
    "has_batch_norm",
    "is_jit_tracing",
    "is_norm",
    "load_url",
    "mmcv_full_available",
    "set_multi_processing",
    "tensor2imgs",
    "torch_meshgrid",
]
