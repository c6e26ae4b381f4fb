"""``is_jit_tracing`` at MMEngine's path ``mmengine.utils.dl_utils.trace``."""

from .torch_ops import is_jit_tracing

__all__ = ["is_jit_tracing"]
