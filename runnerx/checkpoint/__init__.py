"""Checkpoints: crash-safe saving, safe loading, loading weights with key remapping."""

from .io import load_checkpoint, load_model_weights, save_checkpoint

__all__ = ["load_checkpoint", "load_model_weights", "save_checkpoint"]
