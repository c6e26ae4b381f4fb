"""MMEngine's ``mmengine.runner.activation_checkpointing`` path:
``turn_on_activation_checkpointing`` (see :mod:`runnerx.parallel.activation_checkpointing`) and
``wrap_forward``::

    from runnerx.runner.activation_checkpointing import turn_on_activation_checkpointing

    turn_on_activation_checkpointing(model, ['backbone.layer1', 'backbone.layer2'])
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from torch.utils.checkpoint import checkpoint

from runnerx.parallel.activation_checkpointing import turn_on_activation_checkpointing

__all__ = ["turn_on_activation_checkpointing", "wrap_forward"]


def wrap_forward(forward: Callable[..., Any]) -> Callable[..., Any]:
    """``forward`` run through ``torch.utils.checkpoint`` (non-reentrant): its activations are
    recomputed in the backward pass instead of kept (``module.forward =
    wrap_forward(module.forward)``)."""

    @wraps(forward)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    return checkpointed
