"""prepare_model: from the plain model to the wrapped, compiled model of the run, in one place.

.. code-block:: python

    model = prepare_model(
        MODELS.build(cfg.model),
        strategy=dict(type='FSDP', sharding='zero3', wrap_modules=['TransformerBlock']),
        activation_checkpointing=dict(modules=['TransformerBlock']),
        compile=dict(modules=['TransformerBlock']),
        env_cfg=dict(matmul_precision='high'),
    )

The steps, in the order they must happen:

0. a model given as ``torch.compile(model)`` is unwrapped, to be compiled in step 4;
1. speed switches (TF32 matmuls, cuDNN benchmark) and the device (``cuda:LOCAL_RANK`` or CPU),
   then ``channels_last`` weights;
2. SyncBatchNorm (``sync_bn='torch'`` or ``strategy.sync_bn``; distributed runs only);
3. activation checkpointing of the named blocks (before compile, so compile sees it);
4. ``torch.compile`` of the blocks or the whole model, in place (before wrapping, so hooks
   of DDP/FSDP stay outside the compiled graphs);
5. the strategy's wrapper: nothing, DDP, FSDP (which shards the parameters: build the
   optimizer after this) or DataParallel.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from runnerx.dist import get_local_rank

from .activation_checkpointing import apply_activation_checkpointing
from .compile import compile_model, uncompiled
from .speed import apply_speed_switches, to_channels_last
from .strategies import strategy_config, wrap_model
from .sync_bn import sync_batchnorm_for_run

#: the top-level config keys :func:`prepare_model_from_cfg` reads
PREPARE_CFG_KEYS = (
    "strategy",
    "compile",
    "activation_checkpointing",
    "model_wrapper_cfg",
    "env_cfg",
    "sync_bn",
    "find_unused_parameters",
)


def prepare_model(
    model: nn.Module,
    strategy: str | Mapping | None = None,
    compile: bool | Mapping | None = None,
    activation_checkpointing: Mapping | None = None,
    model_wrapper_cfg: Mapping | None = None,
    env_cfg: Mapping | None = None,
    sync_bn: Any = None,
    find_unused_parameters: bool = False,
    device: torch.device | str | None = None,
) -> nn.Module:
    """Place, convert, checkpoint, compile and wrap ``model`` for this process (see the
    module docstring for the order); returns the model to train (``unwrap`` gives back the
    plain one, with the same parameters unless FSDP sharded them)."""
    model, compile = uncompiled(model, compile)
    strategy_cfg = strategy_config(strategy)
    sync_bn = strategy_cfg.pop("sync_bn", sync_bn)
    env_cfg = env_cfg or {}
    apply_speed_switches(env_cfg)
    device = torch.device(device) if device is not None else default_device()
    model = model.to(device)
    if env_cfg.get("channels_last"):
        to_channels_last(model)
    model = sync_batchnorm_for_run(model, sync_bn, device)
    apply_activation_checkpointing(model, activation_checkpointing)
    compile_model(model, compile)
    return wrap_model(model, strategy_cfg, model_wrapper_cfg, find_unused_parameters)


def prepare_model_from_cfg(model: nn.Module, cfg: Mapping[str, Any]) -> nn.Module:
    """:func:`prepare_model` with the keys of a whole config (``PREPARE_CFG_KEYS``)."""
    options = {key: cfg[key] for key in PREPARE_CFG_KEYS if cfg.get(key) is not None}
    return prepare_model(model, **options)


def default_device() -> torch.device:
    """This process's device: ``cuda:LOCAL_RANK`` when CUDA is available, else the CPU."""
    if torch.cuda.is_available():
        return torch.device("cuda", get_local_rank())
    return torch.device("cpu")
