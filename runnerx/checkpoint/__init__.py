"""Checkpoints: crash-safe saving, safe loading, loading weights with key remapping."""

from .io import load_checkpoint, load_model_weights, remove_partial_files, save_checkpoint
from .mmengine_compat import convert_mmengine_message_hub, is_mmengine_checkpoint
from .safe_load import UnsafeCheckpointError

__all__ = [
    "UnsafeCheckpointError",
    "convert_mmengine_message_hub",
    "is_mmengine_checkpoint",
    "load_checkpoint",
    "load_model_weights",
    "remove_partial_files",
    "save_checkpoint",
]
