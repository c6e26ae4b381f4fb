"""One DDP per sub-module, for models with their own ``train_step`` and several optimizers
(GANs): MMEngine's MMSeparateDistributedDataParallel."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from torch import nn

from runnerx.registry import MODEL_WRAPPERS

from .ddp import DistributedDataParallelModel, check_ddp_options
from .strategies import device_ids_of


@MODEL_WRAPPERS.register_module(
    name=["SeparateDistributedDataParallelModel", "MMSeparateDistributedDataParallel"]
)
class SeparateDistributedDataParallelModel(nn.Module):
    """Wraps each direct child of ``module`` that has trainable parameters in its own
    :class:`DistributedDataParallelModel`, in place (``module.generator`` becomes a DDP around
    the generator), and keeps the other children as they are. ``train_step``, ``val_step``
    and ``test_step`` are the model's own, which then run the wrapped children; so a model
    that steps two optimizers itself (``optim_wrapper['generator'].optim_context(
    self.generator)``, ``update_params``) trains on several ranks. The Runner builds it in
    distributed runs only::

        model_wrapper_cfg = dict(type='MMSeparateDistributedDataParallel',
                                 broadcast_buffers=False, find_unused_parameters=False)

    The other keyword arguments go to every child's DDP (``static_graph``, ``device_ids``
    (default: the child's GPU), ...). ``self.module`` is the model. Its ``state_dict()``
    and checkpoints keep the plain model's keys (``generator.weight``, not
    ``generator.module.weight``), so they load into the model in one process.
    """

    def __init__(
        self,
        module: nn.Module,
        broadcast_buffers: bool = False,
        find_unused_parameters: bool = False,
        **kwargs: Any,
    ) -> None:
        check_ddp_options(kwargs, "model_wrapper_cfg")
        super().__init__()
        self.module = module
        for name, child in list(module.named_children()):
            if any(param.requires_grad for param in child.parameters()):
                options = {"device_ids": device_ids_of(child), **kwargs}
                setattr(
                    module,
                    name,
                    _ChildDistributedDataParallel(
                        child,
                        broadcast_buffers=broadcast_buffers,
                        find_unused_parameters=find_unused_parameters,
                        **options,
                    ),
                )

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, Any]:
        """The model's own ``train_step`` (it calls ``optim_context`` and ``update_params``
        on its optimizers itself)."""
        return self.module.train_step(data, optim_wrapper)

    def val_step(self, data: Any) -> Any:
        """The model's own ``val_step``."""
        return self.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        """The model's own ``test_step``."""
        return self.module.test_step(data)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """``no_sync`` of every wrapped child at once: no gradient all-reduce inside.

        (MMEngine's yields once per child and calls ``no_sync`` on children without DDP too,
        so it fails unless the model has exactly one child, a wrapped one.)"""
        with ExitStack() as stack:
            for child in self.module.children():
                if isinstance(child, _ChildDistributedDataParallel):
                    stack.enter_context(child.no_sync())
            yield


class _ChildDistributedDataParallel(DistributedDataParallelModel):
    """The DDP around one child: saves and loads the child's keys without DDP's ``module.``
    (the parent's ``state_dict()`` stays the plain model's)."""

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return self.module.state_dict(*args, **kwargs)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any) -> None:
        # the state dict holds the child's keys as `prefix + name`; DDP keeps them one level
        # down, under `prefix + 'module.' + name`, where nn.Module's loading looks next
        for key in [key for key in state_dict if key.startswith(prefix)]:
            state_dict[f"{prefix}module.{key[len(prefix) :]}"] = state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args)
