"""build_model: what a Runner's ``model`` argument becomes before it is prepared for devices."""

from __future__ import annotations

from torch import nn

from runnerx.config import ConfigDict
from runnerx.registry import MODELS

from .base_model.base_model import check_forward_takes_mode


def build_model(
    model: nn.Module | dict, data_preprocessor: dict | None = None, init_weights: bool = True
) -> nn.Module:
    """The module a Runner trains: a config dict built from MODELS (given the Runner's
    ``data_preprocessor`` when the dict names none), or a module as it is; then, with
    ``init_weights``, its ``init_weights()`` (a Runner skips that when weights are loaded).
    A BaseModel whose ``forward`` takes no ``mode`` is refused here, before training.

    .. code-block:: python

        model = build_model(dict(type='DigitsConvNet'))
    """
    if isinstance(model, dict):
        model = ConfigDict(model) if not isinstance(model, ConfigDict) else model
        if data_preprocessor is not None:
            model.setdefault("data_preprocessor", data_preprocessor)
        model = MODELS.build(model)
    elif not isinstance(model, nn.Module):
        raise TypeError(f"model must be an nn.Module or a config dict, got {type(model)}")
    check_forward_takes_mode(model)
    if init_weights and callable(getattr(model, "init_weights", None)):
        model.init_weights()
    return model
