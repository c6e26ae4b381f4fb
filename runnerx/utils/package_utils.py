"""Installed packages and executables: ``is_installed``, ``get_installed_path``,
``install_package``, ``call_command`` and the ``requires_package`` / ``requires_executable``
decorators (MMEngine's).

.. code-block:: python

    @requires_package('scipy')
    def match_boxes(cost): ...          # RuntimeError naming scipy if it is missing
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

__all__ = [
    "call_command",
    "check_prerequisites",
    "get_installed_path",
    "install_package",
    "is_installed",
    "package2module",
    "requires_executable",
    "requires_package",
]


def _distribution(package: str) -> Any:
    """The installed distribution called ``package``, or None."""
    from importlib import metadata  # imported on use: it costs start-up time

    try:
        return metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return None


def _module_origin(module: str) -> str | None:
    """Where the module ``module`` would be imported from (None: nowhere, or a namespace
    package, which has no single place)."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    return None if spec is None else spec.origin


def is_installed(package: str) -> bool:
    """Whether ``package`` is installed: a distribution of that name (``'mmcv-full'``) or an
    importable module (``'mmcv'``)."""
    return _distribution(package) is not None or _module_origin(package) is not None


def package2module(package: str) -> str:
    """The top-level module that the installed distribution ``package`` provides (its first
    ``top_level.txt`` entry), e.g. ``'mmcv'`` for ``'mmcv-full'``."""
    distribution = _distribution(package)
    if distribution is None:
        raise ValueError(f"package2module: no installed distribution is named {package!r}")
    top_level = distribution.read_text("top_level.txt")
    if not top_level:
        raise ValueError(f"package2module: cannot infer the module name of {package!r}")
    return top_level.split("\n")[0]


def get_installed_path(package: str) -> str:
    """The folder of the installed package ``package`` (a module name, or a distribution
    name such as ``'mmcv-full'``), e.g. to find the configs shipped inside it.

    For an editable install this is the source folder (MMEngine gives a folder under
    site-packages that does not exist).
    """
    module = package
    if _module_origin(package) is None and _distribution(package) is not None:
        module = package2module(package)
    origin = _module_origin(module)
    if origin is not None:
        return os.path.dirname(origin)
    if importlib.util.find_spec(module) is not None:
        raise RuntimeError(
            f"get_installed_path: {package!r} is a namespace package, which has no single folder"
        )
    raise _not_installed_error()(f"get_installed_path: {package!r} is not installed")


@functools.cache
def _not_installed_error() -> type[ModuleNotFoundError]:
    """ModuleNotFoundError, made also ``pkg_resources.DistributionNotFound`` (MMEngine's type)
    where setuptools still has it; imported only here, as it is slow and deprecated."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pkg_resources import DistributionNotFound
    except ImportError:
        return ModuleNotFoundError
    return type("PackageNotFoundError", (ModuleNotFoundError, DistributionNotFound), {})


def call_command(cmd: list[str]) -> None:
    """Run the command ``cmd`` (a list of arguments); CalledProcessError if it fails."""
    subprocess.check_call(cmd)


def install_package(package: str) -> None:
    """``pip install package`` (with this Python) unless it is installed already."""
    if not is_installed(package):
        call_command([sys.executable, "-m", "pip", "install", package])


def check_prerequisites(
    prerequisites: str | list[str],
    checker: Callable[[str], bool],
    msg_tmpl: str = 'Prerequisites "{}" are required in method "{}" but not found, '
    "please install them first.",
) -> Callable:
    """A decorator factory: the decorated function first checks each prerequisite with
    ``checker`` and raises RuntimeError (``msg_tmpl`` filled with the missing ones and the
    function's name) when any is missing."""
    required = [prerequisites] if isinstance(prerequisites, str) else list(prerequisites)

    def decorate(func: Callable) -> Callable:
        @functools.wraps(func)
        def checked(*args: Any, **kwargs: Any) -> Any:
            missing = [item for item in required if not checker(item)]
            if missing:
                raise RuntimeError(msg_tmpl.format(", ".join(missing), func.__name__))
            return func(*args, **kwargs)

        return checked

    return decorate


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def requires_package(prerequisites: str | list[str]) -> Callable:
    """A decorator: the function raises RuntimeError naming the missing Python packages
    (modules that do not import) when it is called without them."""
    return check_prerequisites(prerequisites, checker=_importable)


def requires_executable(prerequisites: str | list[str]) -> Callable:
    """A decorator: the function raises RuntimeError naming the missing executables (not on
    PATH) when it is called without them."""
    return check_prerequisites(prerequisites, checker=lambda cmd: shutil.which(cmd) is not None)
