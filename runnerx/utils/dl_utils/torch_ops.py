"""``TORCH_VERSION`` and the torch wrappers MMEngine kept for old torch versions."""

from __future__ import annotations

import torch

#: ``torch.__version__`` itself: a ``str`` that compares as a version, so
#: ``TORCH_VERSION >= '2.4'`` and ``TORCH_VERSION >= (2, 4)`` mean what they say.
TORCH_VERSION: str = torch.__version__


def torch_meshgrid(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``torch.meshgrid`` with ``indexing='ij'`` (its old default), without its warning."""
    return torch.meshgrid(*tensors, indexing="ij")


def is_jit_tracing() -> bool:
    """Whether the code runs under ``torch.jit.trace``."""
    return torch.jit.is_tracing()
