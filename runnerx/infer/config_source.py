"""Where an inferencer's config comes from: what its ``model`` argument names, or the config a
Runner saved in the checkpoint it is given."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping
from typing import Any

from runnerx.config import Config, ConfigDict

#: looks a model name up in a model zoo: its config and weights
ZooLookup = Callable[[str], tuple[Config, "str | None"]]


def config_of(
    model: Any, weights: str | None, zoo_lookup: ZooLookup
) -> tuple[Config | ConfigDict, str | None]:
    """The config ``model`` names (a file, ``'pkg::path'``, a Config or dict, a zoo model's
    name, or None: an empty config that the checkpoint's saved one fills in later) and the
    weights to load (a zoo model's own when ``weights`` is None)."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str):
        if os.path.isfile(model):
            return Config.fromfile(model), weights
        if "::" in model:
            from runnerx.hub import get_config

            return get_config(model), weights
        if model.endswith((".py", ".json", ".yaml", ".yml")):
            raise FileNotFoundError(f"model={model!r}: no such config file")
        cfg, zoo_weights = zoo_lookup(model)
        return cfg, zoo_weights if weights is None else weights
    if isinstance(model, (Config, ConfigDict)):
        return copy.deepcopy(model), weights
    if isinstance(model, Mapping):
        return ConfigDict(copy.deepcopy(dict(model))), weights
    if model is None:
        if weights is None:
            raise ValueError(
                "give model= (a config file, Config, dict or model name) or weights= "
                "(a checkpoint that holds its config); both are None"
            )
        return ConfigDict(), weights
    raise TypeError(
        "model must be a config file path, a Config or dict, a model name or None, "
        f"got {type(model).__name__}"
    )


def saved_config(checkpoint: Mapping | None, weights: str | None) -> Config:
    """The config a Runner saved in ``checkpoint`` (its message hub's, else its meta's)."""
    hub = (checkpoint or {}).get("message_hub")
    runtime_info = hub.get("runtime_info", {}) if isinstance(hub, Mapping) else {}
    meta = (checkpoint or {}).get("meta")
    text = runtime_info.get("cfg") or (meta.get("cfg") if isinstance(meta, Mapping) else None)
    if not text:
        raise ValueError(
            f"model=None: the config comes from the checkpoint, but weights={weights!r} holds "
            "none (no message_hub.runtime_info.cfg or meta.cfg); pass model=<config file>"
        )
    return Config.fromstring(text, file_format=".py")
