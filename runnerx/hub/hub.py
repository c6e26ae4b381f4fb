"""``get_config`` and ``get_model``, at MMEngine's path ``mmengine.hub.hub``: the configs and
models an installed package ships.

A package keeps its configs in ``<pkg>/.mim/configs`` (OpenMMLab's layout) or
``<pkg>/configs``, and lists its trained weights in ``<pkg>/.mim/model-index.yml``, whose
``Import`` entries name metafiles with ``Models: [{Name, Config, Weights}, ...]``.
"""

from __future__ import annotations

import os
from typing import Any

from torch import nn

from runnerx.config import Config
from runnerx.config.external import CONFIG_FOLDERS, package_config_folders, resolve_base_path

__all__ = ["get_config", "get_model"]


def get_config(cfg_path: str, pretrained: bool = False) -> Config:
    """The config ``'pkg::path/to/config.py'`` that the installed package ``pkg`` ships;
    ``pretrained=True`` also sets ``cfg.model_path`` to the URL of the weights its model
    index lists for that config."""
    if not isinstance(cfg_path, str) or "::" not in cfg_path:
        raise ValueError(
            f"get_config takes 'package::path/to/config.py', e.g. "
            f"'mmdet::faster_rcnn/faster-rcnn_r50_fpn_1x_coco.py'; got {cfg_path!r}"
        )
    path, package = resolve_base_path(cfg_path, "get_config", None)
    cfg = Config.fromfile(path)
    if pretrained:
        cfg.model_path = _weights_url(package, cfg_path.partition("::")[2])
    return cfg


def get_model(cfg_path: str, pretrained: bool = False, **kwargs: Any) -> nn.Module:
    """The model of :func:`get_config`'s config, built in the package's registry scope (its
    ``registry`` module imported, as MMEngine does), with ``kwargs`` as default arguments;
    ``pretrained=True`` loads the weights its model index lists (and keeps the config as
    ``model.cfg``, as MMEngine does)."""
    from runnerx.checkpoint.model_state import load_checkpoint
    from runnerx.registry import MODELS

    cfg = get_config(cfg_path, pretrained)
    if "model" not in cfg:
        raise KeyError(f"get_model: the config {cfg_path!r} has no model")
    package = cfg_path.partition("::")[0]
    with MODELS.switch_scope_and_registry(package) as registry:
        model = registry.build(cfg.model, default_args=kwargs)
    if pretrained:
        load_checkpoint(model, cfg.model_path)
        model.cfg = cfg
    return model


def _weights_url(package: str, relative: str) -> str:
    """The ``Weights`` its model index lists for the config at ``relative`` (under the
    package's config folder)."""
    from runnerx.fileio import load

    wanted = os.path.normpath(relative)
    index_files = [
        os.path.join(os.path.dirname(folder), "model-index.yml")
        for folder in package_config_folders(package, "get_config", f"{package}::{relative}")
        if folder.endswith(CONFIG_FOLDERS[0])
    ]
    index_file = next((path for path in index_files if os.path.isfile(path)), None)
    if index_file is None:
        raise FileNotFoundError(
            f"get_config(pretrained=True): package {package!r} lists no trained weights "
            f"(no .mim/model-index.yml in {', '.join(index_files) or 'it'})"
        )
    root = os.path.dirname(index_file)
    for metafile in load(index_file).get("Import", []):
        for entry in load(os.path.join(root, metafile)).get("Models", []):
            config = os.path.normpath(str(entry.get("Config", "")))
            if config.split(os.sep, 1)[-1] == wanted and entry.get("Weights"):
                return str(entry["Weights"])
    raise ValueError(
        f"get_config(pretrained=True): {package}'s model index lists no weights for the "
        f"config {relative!r}"
    )
