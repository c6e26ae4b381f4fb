"""``custom_imports``: modules a config imports so that their registrations run.

.. code-block:: python

    custom_imports = dict(imports=['my_pkg.models', 'my_pkg.hooks'], allow_failed_imports=False)
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType


def import_modules_from_strings(
    imports: str | list[str] | None, allow_failed_imports: bool = False
) -> ModuleType | list[ModuleType | None] | None:
    """Import each named module; a failure is an ImportError unless ``allow_failed_imports``.

    Returns the module for a single name, a list (``None`` for allowed failures) for a list.
    """
    if not imports:
        return None
    single = isinstance(imports, str)
    names = [imports] if single else imports
    if not isinstance(names, (list, tuple)):
        raise TypeError(
            f"custom_imports.imports must be a module name or a list of them, "
            f"got {type(imports).__name__}: {imports!r}"
        )
    modules: list[ModuleType | None] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"custom_imports.imports holds {name!r}, which is not a module name")
        try:
            modules.append(importlib.import_module(name))
        except ImportError as error:
            if not allow_failed_imports:
                raise ImportError(
                    f"custom_imports.imports: cannot import {name!r} ({error}). The module "
                    f"must be importable from sys.path: install its package or add its folder "
                    f"to PYTHONPATH. sys.path is: {sys.path}"
                ) from error
            warnings.warn(
                f"custom_imports: {name!r} failed to import and is ignored: {error}",
                UserWarning,
                stacklevel=2,
            )
            modules.append(None)
    return modules[0] if single else modules
