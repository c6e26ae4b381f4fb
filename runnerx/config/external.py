"""Where a ``_base_`` entry points: a path beside the file, or ``pkg::path`` in a package.

``_base_ = 'mmdet::_base_/models/faster-rcnn_r50_fpn.py'`` reads the config that the
installed package ships. OpenMMLab packages ship theirs as ``<pkg>/.mim/configs``; a package
may also ship them as ``<pkg>/configs``. The package is found with Python's import machinery
(without importing it), so anything on ``sys.path`` works, installed or not.
"""

from __future__ import annotations

import importlib.util
import os

from .errors import ConfigFileNotFoundError

CONFIG_FOLDERS = (os.path.join(".mim", "configs"), "configs")


def resolve_base_path(spec: str, asked_by: str, line: int | None) -> tuple[str, str | None]:
    """Return the file a ``_base_`` entry names and, for ``pkg::path``, the package's scope."""
    where = f"{asked_by}:{line}" if line else asked_by
    if "::" not in spec:
        path = os.path.join(os.path.dirname(asked_by), spec)
        if not os.path.isfile(path):
            raise ConfigFileNotFoundError(
                f"{where}: base config {spec!r} not found (looked for {os.path.normpath(path)})"
            )
        return path, None

    package, _, relative = spec.partition("::")
    for folder in package_config_folders(package, where, spec):
        path = os.path.join(folder, relative)
        if os.path.isfile(path):
            return path, package
    tried = ", ".join(
        os.path.join(f, relative) for f in package_config_folders(package, where, spec)
    )
    raise ConfigFileNotFoundError(f"{where}: base config {spec!r} not found (looked for {tried})")


def package_config_folders(package: str, where: str, spec: str) -> list[str]:
    """The folders where ``package`` may keep its configs."""
    roots = package_folders(package, where, spec)
    return [os.path.join(root, folder) for root in roots for folder in CONFIG_FOLDERS]


def package_folders(package: str, where: str, spec: str) -> list[str]:
    """The folders of the importable ``package``, found without importing it; ``where`` (the
    asking ``file:line``) and ``spec`` (what it asked for) name the error if there are none."""
    try:
        found = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        found = None
    if found is None or not (found.submodule_search_locations or found.origin):
        raise ConfigFileNotFoundError(
            f"{where}: base config {spec!r} names package {package!r}, which is not installed "
            f"(not importable from sys.path)"
        )
    return list(found.submodule_search_locations or [os.path.dirname(found.origin)])
