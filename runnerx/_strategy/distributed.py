"""DDPStrategy and FSDPStrategy objects: SingleDeviceStrategy with another wrapper.

Each hands its arguments to the ``STRATEGIES`` entry of its name
(:mod:`runnerx.parallel.mmengine_strategies`), which maps them onto runnerx's DDP and FSDP2
and names ``strategy.<key>`` in its errors. DeepSpeedStrategy and ColossalAIStrategy are
errors saying what to use instead, as their config names are.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runnerx.parallel.mmengine_strategies import colossalai_strategy, deepspeed_strategy

from .single_device import SingleDeviceStrategy


class DDPStrategy(SingleDeviceStrategy):
    """Data parallel training (MMEngine's ``DDPStrategy``): runnerx's DDP, with
    ``model_wrapper``'s arguments (``broadcast_buffers=False`` without it, as in MMEngine) or
    the ``MODEL_WRAPPERS`` type it names, and ``sync_bn='torch'`` for SyncBatchNorm::

        strategy = DDPStrategy(model_wrapper=dict(find_unused_parameters=True))

    The process group is started from ``env_kwargs=dict(dist_cfg=dict(backend=...))``: nccl
    on CUDA, gloo otherwise (MMEngine: always nccl). In one process the model runs as it is,
    with a warning.
    """

    def __init__(
        self, *, model_wrapper: Mapping | None = None, sync_bn: str | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.model_wrapper = model_wrapper
        self.sync_bn = sync_bn

    def wrapper_cfg(self) -> dict:
        """``dict(type='DDPStrategy', model_wrapper=..., sync_bn=...)`` (the arguments given)."""
        return _without_none(
            type="DDPStrategy", model_wrapper=self.model_wrapper, sync_bn=self.sync_bn
        )


class FSDPStrategy(DDPStrategy):
    """Fully sharded training (MMEngine's ``FSDPStrategy``): runnerx's FSDP2 with the FSDP1
    options of ``model_wrapper`` (``auto_wrap_policy``, ``sharding_strategy``,
    ``mixed_precision``, ...), ``activation_checkpointing=dict(check_fn=...)`` and
    ``state_dict_cfg`` mapped as the ``FSDPStrategy`` config name maps them
    (docs/distributed.md has the table)::

        strategy = FSDPStrategy(
            model_wrapper=dict(auto_wrap_policy=partial(
                transformer_auto_wrap_policy, transformer_layer_cls={LlamaDecoderLayer})),
            state_dict_cfg='full')

    ``state_dict_cfg='full'``: ``save_checkpoint`` writes one file of whole tensors (rank 0);
    ``'local'`` (MMEngine's default): a folder of every rank's shards
    (``torch.distributed.checkpoint``; MMEngine writes ``rank{N}.pth`` files instead). In one
    process the model runs as it is, with a warning, and checkpoints are files.
    """

    def __init__(
        self,
        *,
        model_wrapper: Mapping | None = None,
        skip_init_weights: bool = False,
        state_dict_cfg: str | Mapping = "local",
        activation_checkpointing: Mapping | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(model_wrapper=model_wrapper, **kwargs)
        self.skip_init_weights = skip_init_weights
        self.state_dict_cfg = state_dict_cfg
        self.activation_checkpointing = activation_checkpointing

    def wrapper_cfg(self) -> dict:
        """``dict(type='FSDPStrategy', ...)`` with the arguments given."""
        return _without_none(
            type="FSDPStrategy",
            model_wrapper=self.model_wrapper,
            skip_init_weights=self.skip_init_weights,
            state_dict_cfg=self.state_dict_cfg,
            activation_checkpointing=self.activation_checkpointing,
            sync_bn=self.sync_bn,
        )


class DeepSpeedStrategy:
    """MMEngine's ``DeepSpeedStrategy``: not run by runnerx; building one is an error saying
    what to use instead."""

    def __init__(self, **kwargs: Any) -> None:
        deepspeed_strategy(None)


class ColossalAIStrategy:
    """MMEngine's ``ColossalAIStrategy``: not run by runnerx; building one is an error saying
    what to use instead."""

    def __init__(self, **kwargs: Any) -> None:
        colossalai_strategy(None)


def _without_none(**values: Any) -> dict:
    return {key: value for key, value in values.items() if value is not None}
