"""The model zoo of an installed package: the trained models its ``model-index.yml`` lists,
found by name or alias (``BaseInferencer(model='resnet18_8xb32_in1k', scope='mmpretrain')``,
``BaseInferencer.list_models('mmpretrain')``).

runnerx ships no model zoo of its own. A package ships one the way MMEngine reads it: a
``model-index.yml`` whose ``Import`` entries name metafiles, each listing
``Models: [{Name, Alias, Config, Weights}, ...]``, with paths relative to the folder of
``model-index.yml``. That folder is the source checkout's root when a ``configs`` folder lies
beside the package (``pip install -e .``), else the package's ``.mim`` folder (a wheel).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from runnerx.config import Config
from runnerx.config.errors import ConfigFileNotFoundError
from runnerx.config.external import package_folders
from runnerx.fileio import load
from runnerx.logging import print_log
from runnerx.registry.scopes import ROOT_SCOPE, alias_of
from runnerx.suggest import did_you_mean

INDEX_FILE = "model-index.yml"


def zoo_root(scope: str) -> str:
    """The folder whose ``model-index.yml`` lists the models of the package ``scope``."""
    if scope == ROOT_SCOPE or alias_of(scope) is not None:
        raise FileNotFoundError(
            f"scope {scope!r} has no model zoo: runnerx ships no trained models. Name the "
            "package whose model-index.yml lists them (scope='mmpretrain'), or give a config "
            "file and weights= instead of a model name"
        )
    try:
        package = package_folders(scope, "model zoo", scope)[0]
    except ConfigFileNotFoundError:
        raise ModuleNotFoundError(
            f"scope {scope!r}: no package {scope!r} is installed, so there is no model zoo to "
            f"look models up in (pip install the package that provides {scope!r})"
        ) from None
    checkout = os.path.dirname(package)
    has_configs = os.path.isdir(os.path.join(checkout, "configs"))
    root = checkout if has_configs else os.path.join(package, ".mim")
    if not os.path.isfile(os.path.join(root, INDEX_FILE)):
        raise FileNotFoundError(
            f"package {scope!r} ships no model zoo: there is no {os.path.join(root, INDEX_FILE)}"
        )
    return root


def zoo_models(root: str) -> Iterator[dict[str, Any]]:
    """Every model entry of the metafiles that ``<root>/model-index.yml`` imports."""
    index = load(os.path.join(root, INDEX_FILE)) or {}
    for metafile in index.get("Import", []):
        yield from (load(os.path.join(root, metafile)) or {}).get("Models", [])


def model_names(entry: dict[str, Any]) -> list[str]:
    """A model entry's ``Name`` and its ``Alias`` (one name or a list of them)."""
    aliases = entry.get("Alias", [])
    return [entry["Name"], *([aliases] if isinstance(aliases, str) else aliases)]


def find_zoo_model(scope: str, name: str) -> tuple[Config, str | None]:
    """The config and weights (its first ``Weights`` when it lists several) of the model
    ``scope``'s zoo lists as ``name`` or as an alias, compared without case."""
    root = zoo_root(scope)
    known = []
    for entry in zoo_models(root):
        names = model_names(entry)
        if name.lower() in (known_name.lower() for known_name in names):
            weights = entry.get("Weights")
            weights = weights[0] if isinstance(weights, list) else weights
            return Config.fromfile(os.path.join(root, entry["Config"])), weights
        known.extend(names)
    hint = did_you_mean(name, known, n=3)
    raise ValueError(
        f"model {name!r} is neither a config file nor a model in {scope}'s model zoo "
        f"({os.path.join(root, INDEX_FILE)}){hint}"
    )


def list_zoo_models(scope: str, patterns: str = r".*") -> list[str]:
    """The names and aliases in ``scope``'s model zoo that the regular expression
    ``patterns`` matches (at their start, as ``re.match``), in the metafiles' order; also
    logged, one ``model_name: <name>`` line each."""
    matched = [
        name
        for entry in zoo_models(zoo_root(scope))
        for name in model_names(entry)
        if re.match(patterns, name) is not None
    ]
    print_log("".join(f"model_name: {name}\n" for name in matched), logger="current")
    return matched
