"""What is registered where: MMEngine's ``traverse_registry_tree`` and
``count_registered_modules``, for checking that a package's registrations took place."""

from __future__ import annotations

import datetime
import json
import os

from runnerx.registry.default_scope import init_default_scope
from runnerx.registry.registry import Registry

# init_default_scope is here too, where MMEngine defines it
__all__ = ["count_registered_modules", "init_default_scope", "traverse_registry_tree"]


def traverse_registry_tree(registry: Registry, verbose: bool = True) -> list[dict]:
    """Describe every registry of ``registry``'s tree, from its root, depth first: one dict
    each, with ``num_modules``, ``scope`` and, per folder of the registering modules, the
    names registered from there::

        [{'num_modules': 2, 'scope': 'runnerx', 'runnerx/hooks': ['CheckpointHook', ...]},
         {'num_modules': 1, 'scope': 'mypkg', 'mypkg/hooks': ['MyHook']}]
    """
    described = []
    pending = [registry.root]
    while pending:
        node = pending.pop()
        entries = node.module_dict
        info: dict = {"num_modules": len(entries), "scope": node.scope}
        for name, obj in entries.items():
            folder = "/".join((getattr(obj, "__module__", None) or "").split(".")[:-1])
            info.setdefault(folder, []).append(name)
        described.append(info)
        if verbose:
            _log(f"Find {len(entries)} modules in {node.scope}'s '{node.name}' registry")
        pending.extend(reversed(list(node.children.values())))
    return described


def count_registered_modules(save_path: str | None = None, verbose: bool = True) -> dict:
    """Describe the trees of all root registries (:func:`traverse_registry_tree`), keyed by
    the registry's name in :mod:`runnerx.registry`, with the date of the scan; with
    ``save_path``, also write it to ``<save_path>/modules_statistic_results.json``."""
    from runnerx.registry import root

    registries = {
        name: traverse_registry_tree(value, verbose)
        for name, value in sorted(vars(root).items())
        if isinstance(value, Registry)
    }
    scan_date = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    result = {"scan_date": scan_date, "registries": registries}
    if verbose:
        _log(f"Finish registry analysis, got: {result}")
    if save_path is not None:
        os.makedirs(save_path, exist_ok=True)
        path = os.path.join(save_path, "modules_statistic_results.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(result, file, indent=2)
        if verbose:
            _log(f"Result has been saved to {path}")
    return result


def _log(message: str) -> None:
    from runnerx.logging import print_log  # the logging package imports torch

    print_log(message, logger="current")
