"""How a model is placed, wrapped and compiled for a run, and its state saved and loaded.

``prepare_model`` (or ``prepare_model_from_cfg``) takes the plain model through device
placement, SyncBatchNorm, activation checkpointing, ``torch.compile`` and the strategy's
wrapper (single device, DDP, FSDP2, DataParallel); ``unwrap`` gives back the plain model.
The state dict functions save and load model and optimizer state whatever the wrapper, as
full single files or sharded folders. See docs/distributed.md.

Importing this package registers the strategies (``STRATEGIES``: SingleDevice, DDP, FSDP,
DP, and MMEngine's FlexibleRunner names SingleDeviceStrategy, DDPStrategy, FSDPStrategy,
DeepSpeedStrategy, ColossalAIStrategy) and the model wrappers (``MODEL_WRAPPERS``:
MMDistributedDataParallel, MMSeparateDistributedDataParallel, FullyShardedModel,
DataParallelModel).
"""

from . import mmengine_strategies  # noqa: F401  (registers MMEngine's strategy names)
from .activation_checkpointing import apply_activation_checkpointing
from .compile import compile_model
from .data_parallel import DataParallelModel
from .ddp import DistributedDataParallelModel
from .fsdp import FullyShardedModel, is_fully_sharded
from .prepare import PREPARE_CFG_KEYS, default_device, prepare_model, prepare_model_from_cfg
from .presets import OPTIMIZATION_LEVELS, optimization_level_changes
from .separate_ddp import SeparateDistributedDataParallelModel
from .sharded_checkpoint import (
    consolidate_checkpoint,
    load_sharded_checkpoint,
    save_sharded_checkpoint,
    saves_sharded,
)
from .speed import apply_speed_switches, to_channels_last
from .state_dict import (
    load_model_state_dict,
    load_optimizer_state_dict,
    model_state_dict,
    optimizer_state_dict,
)
from .strategies import STRATEGY_NAMES, strategy_config, wrap_model
from .sync_bn import convert_sync_batchnorm
from .unwrap import unwrap

__all__ = [
    "OPTIMIZATION_LEVELS",
    "PREPARE_CFG_KEYS",
    "STRATEGY_NAMES",
    "DataParallelModel",
    "DistributedDataParallelModel",
    "FullyShardedModel",
    "SeparateDistributedDataParallelModel",
    "apply_activation_checkpointing",
    "apply_speed_switches",
    "compile_model",
    "consolidate_checkpoint",
    "convert_sync_batchnorm",
    "default_device",
    "is_fully_sharded",
    "load_model_state_dict",
    "load_optimizer_state_dict",
    "load_sharded_checkpoint",
    "model_state_dict",
    "optimization_level_changes",
    "optimizer_state_dict",
    "prepare_model",
    "prepare_model_from_cfg",
    "save_sharded_checkpoint",
    "saves_sharded",
    "strategy_config",
    "to_channels_last",
    "unwrap",
    "wrap_model",
]
