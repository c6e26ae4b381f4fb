"""MMEngine's model-zoo checkpoint names: ``torchvision://``, ``open-mmlab://``, ``mmcls://``.

OpenMMLab configs name pretrained weights this way, and they load here unchanged::

    model = dict(backbone=dict(
        type='ResNet', depth=50,
        init_cfg=dict(type='Pretrained', checkpoint='torchvision://resnet50')))
    load_from = 'open-mmlab://detectron2/resnet50_caffe'

- ``torchvision://NAME`` (``modelzoo://NAME`` is its deprecated spelling) takes the URL from
  the installed torchvision's weight enums: ``resnet50.imagenet1k_v2``, ``resnet50.default``
  and ``ResNet50_Weights.IMAGENET1K_V2`` (any case) name one weight; a bare ``resnet50`` means
  what torchvision's legacy ``pretrained=True`` loaded, ``IMAGENET1K_V1`` (``DEFAULT`` for the
  two models without such weights, vit_h_14 and regnet_y_128gf, whose ``pretrained=True``
  torchvision refuses). The names torchvision 0.12 gave some of those files, which MMEngine
  still lists (``inception_v3_google``, ``shufflenetv2_x1.0``), name them too.
- ``open-mmlab://NAME`` (or ``openmmlab://NAME``) and ``mmcls://NAME`` look NAME up in the
  user's table (``open_mmlab.json`` / ``mmcls.json`` in :func:`runnerx_home`), then in the
  tables an installed mmengine (or mmcv) ships, read as data without importing it. A value is
  a URL, or a path relative to :func:`runnerx_home`. A deprecated ``open-mmlab://`` name
  warns and loads its successor, unless the user's table has the old name (MMEngine renames
  before it looks, so there its user table cannot keep an old name). ``mmcls://`` keeps only
  the backbone's weights, without their ``backbone.`` prefix, as MMEngine does.

URLs are downloaded once into torch's hub cache, as ``http(s)://`` names are (see
:func:`runnerx.checkpoint.loader.load_from_http`), and every file is read safely.
:class:`~runnerx.checkpoint.loader.CheckpointLoader` registers the readers below.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
from collections import OrderedDict
from typing import Any

import torch

from runnerx.logging import print_log
from runnerx.suggest import close_matches

from .url_errors import download_errors_named

ENV_RUNNERX_HOME = "RUNNERX_HOME"

#: each table's file in the user's home and in the packages that ship one, in the order asked
_USER_TABLES = {"open-mmlab": "open_mmlab.json", "mmcls": "mmcls.json"}
_ZOO_TABLES = {"mmcls": "mmcls.json", "deprecated": "deprecated.json"}
#: torchvision 0.12's names of the models renamed since, as MMEngine's table still has them
_TORCHVISION_012_NAMES = {
    "inception_v3_google": "inception_v3",
    **{
        f"shufflenetv2_x{w}": f"shufflenet_v2_x{w.replace('.', '_')}"
        for w in ("0.5", "1.0", "1.5", "2.0")
    },
}
_PACKAGE_TABLES = (
    ("mmengine", "hub", {"open-mmlab": "openmmlab.json", **_ZOO_TABLES}),
    ("mmcv", "model_zoo", {"open-mmlab": "open_mmlab.json", **_ZOO_TABLES}),  # mmcv 1.x
)


def runnerx_home() -> str:
    """The folder of the user's model-zoo tables and of the table entries that are relative
    paths: ``$RUNNERX_HOME``, else ``$XDG_CACHE_HOME/runnerx``, else ``~/.cache/runnerx``
    (MMEngine's ``MMENGINE_HOME`` and ``~/.cache/mmengine`` play this part there)."""
    cache = os.getenv("XDG_CACHE_HOME") or "~/.cache"
    return os.path.expanduser(os.getenv(ENV_RUNNERX_HOME) or os.path.join(cache, "runnerx"))


def get_torchvision_models() -> dict[str, str]:
    """Every name ``torchvision://`` takes, lower case, with its URL: ``<model>.<weights>``
    and ``<model>.default`` for each weight of each torchvision classification model, and
    the bare ``<model>`` for its legacy ``pretrained=True`` weights (see the module's notes).
    """
    return _torchvision_urls("torchvision://")


def get_external_models() -> dict[str, str]:
    """``open-mmlab://`` names and their URLs (or paths): the installed mmengine's (or
    mmcv's) table, with the user's ``open_mmlab.json`` over it."""
    return {**_package_table("open-mmlab"), **_user_table("open-mmlab")[1]}


def get_mmcls_models() -> dict[str, str]:
    """``mmcls://`` names and their URLs: the installed mmengine's (or mmcv's) table, with
    the user's ``mmcls.json`` over it."""
    return {**_package_table("mmcls"), **_user_table("mmcls")[1]}


def get_deprecated_model_names() -> dict[str, str]:
    """Old ``open-mmlab://`` names and the names that replace them, from the installed
    mmengine's (or mmcv's) ``deprecated.json``."""
    return _package_table("deprecated")


def load_from_torchvision(
    filename: str, map_location: Any = None, unsafe_load: bool = False
) -> Any:
    """The torchvision weights ``torchvision://NAME`` (or ``modelzoo://NAME``) names, from
    torch's hub cache (downloaded there first if missing); see the module's notes."""
    if filename.startswith("modelzoo://"):
        print_log(
            f'{filename}: the "modelzoo://" prefix is deprecated, write "torchvision://"',
            logger="current",
            level=logging.WARNING,
        )
    urls = _torchvision_urls(filename)
    name = filename.split("://", 1)[1]
    key = name.lower()
    if key not in _TORCHVISION_012_NAMES:  # their dots are not the weights' dots
        model, dot, weights = key.partition(".")
        key = model.removesuffix("_weights") + dot + weights
    if key not in urls:
        import torchvision

        raise ValueError(
            f"{filename}: torchvision {torchvision.__version__} has no weights called "
            f"{name!r}{_did_you_mean('torchvision://', key, urls)}. Name a model (resnet50: "
            "its legacy pretrained=True weights), one of its weights (resnet50.imagenet1k_v2, "
            "resnet50.default) or a weights enum member (ResNet50_Weights.IMAGENET1K_V2); "
            "runnerx.runner.checkpoint.get_torchvision_models() lists them all"
        )
    return _read(filename, urls[key], map_location, unsafe_load)


def load_from_openmmlab(filename: str, map_location: Any = None, unsafe_load: bool = False) -> Any:
    """The checkpoint ``open-mmlab://NAME`` (or ``openmmlab://NAME``) names in the user's
    table or the installed mmengine's; a deprecated name warns and loads its successor."""
    return _read(filename, _zoo_location(filename, "open-mmlab"), map_location, unsafe_load)


def load_from_mmcls(filename: str, map_location: Any = None, unsafe_load: bool = False) -> Any:
    """The backbone of the MMClassification checkpoint ``mmcls://NAME`` names, as
    ``{'state_dict': ...}`` with the ``backbone.`` prefix taken off its keys (the other
    weights are left out)."""
    checkpoint = _read(filename, _zoo_location(filename, "mmcls"), map_location, unsafe_load)
    weights = checkpoint.get("state_dict", checkpoint)
    return {
        "state_dict": OrderedDict(
            (key[len("backbone.") :], value)
            for key, value in weights.items()
            if key.startswith("backbone.")
        )
    }


def _torchvision_urls(filename: str) -> dict[str, str]:
    try:
        import torchvision
    except Exception as error:  # not installed, or e.g. its C++ ops built for another torch
        if isinstance(error, ModuleNotFoundError) and error.name == "torchvision":
            raise ImportError(
                f"{filename} names torchvision's weights, but torchvision is not installed: "
                "pip install torchvision (the release made for your torch, "
                f"{torch.__version__})"
            ) from None
        raise ImportError(
            f"{filename} names torchvision's weights, but torchvision does not import here "
            f"({type(error).__name__}: {error}); install the torchvision build made for your "
            f"torch, {torch.__version__}"
        ) from error
    models = torchvision.models
    urls = {}
    for model in models.list_models(models):
        weights = models.get_model_weights(model)
        members = weights.__members__  # with the aliases, such as DEFAULT
        if "DEFAULT" not in members:
            continue
        urls[model] = members.get("IMAGENET1K_V1", members["DEFAULT"]).url
        urls[f"{model}.default"] = members["DEFAULT"].url
        for weight in weights:
            urls[f"{model}.{weight.name.lower()}"] = weight.url
    urls.update((old, urls[new]) for old, new in _TORCHVISION_012_NAMES.items() if new in urls)
    return urls


def _zoo_location(filename: str, table: str) -> str:
    """The URL or path the user's table or a package's gives for ``filename``'s name."""
    prefix, name = filename.split("://", 1)
    user_path, user = _user_table(table)
    if table == "open-mmlab" and name not in user:
        successor = get_deprecated_model_names().get(name)
        if successor is not None:
            print_log(
                f"{prefix}://{name} is deprecated in favor of {prefix}://{successor}",
                logger="current",
                level=logging.WARNING,
            )
            name = successor
    package_path = _package_table_path(table)
    known = {**_read_table(package_path), **user}
    if name in known:
        return known[name]
    looked = [user_path + ("" if os.path.isfile(user_path) else " (no such file)")]
    looked.append(package_path or "the table of an installed mmengine or mmcv (there is none)")
    # an mmcls:// checkpoint is a whole classifier: by its URL, keep its backbone with prefix=
    url = "https URL" + (" (with Pretrained's prefix='backbone.')" if table == "mmcls" else "")
    raise ValueError(
        f"{filename}: no checkpoint is named {name!r} in {' or in '.join(looked)}"
        f"{_did_you_mean(f'{prefix}://', name, known)}. Give the checkpoint's {url} "
        f'instead, or add "{name}": "https://..." to {user_path} (its folder: '
        f"${ENV_RUNNERX_HOME}, else $XDG_CACHE_HOME/runnerx or ~/.cache/runnerx)"
    )


def _read(filename: str, location: str, map_location: Any, unsafe_load: bool) -> Any:
    from .loader import load_from_http, load_from_local  # loader imports this module

    if location.startswith(("http://", "https://")):
        with download_errors_named(filename):
            return load_from_http(location, map_location, unsafe_load=unsafe_load)
    path = os.path.join(runnerx_home(), os.path.expanduser(location))
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{filename}: its table gives the path {location!r}, read in {runnerx_home()} "
            f"(${ENV_RUNNERX_HOME}): {path} is not a file"
        )
    return load_from_local(path, map_location, unsafe_load)


def _user_table(table: str) -> tuple[str, dict[str, str]]:
    path = os.path.join(runnerx_home(), _USER_TABLES[table])
    return path, _read_table(path)


def _package_table(table: str) -> dict[str, str]:
    return _read_table(_package_table_path(table))


def _package_table_path(table: str) -> str | None:
    """The first installed package's file for ``table``; the package is found, not imported."""
    for package, folder, names in _PACKAGE_TABLES:
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            continue
        for location in (spec and spec.submodule_search_locations) or ():
            path = os.path.join(location, folder, names[table])
            if os.path.isfile(path):
                return path
    return None


def _read_table(path: str | None) -> dict[str, str]:
    if path is None or not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as file:
        try:
            table = json.load(file)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(table, dict) or not all(
        isinstance(name, str) and isinstance(value, str) for name, value in table.items()
    ):
        raise ValueError(
            f'{path}: a model-zoo table is a JSON object of "name": "URL or path" strings'
        )
    return table


def _did_you_mean(prefix: str, name: str, known: dict[str, str]) -> str:
    matches = [repr(prefix + match) for match in close_matches(name, known)]
    return f" (did you mean {', '.join(matches)}?)" if matches else ""
