"""Resolve a dotted Python path (``'torch.optim.SGD'``) to the object it names."""

from __future__ import annotations

import importlib
from typing import Any


def import_object(path: str) -> tuple[Any, str]:
    """Import the object that ``path`` names; return ``(obj, '')`` or ``(None, why_not)``.

    The longest importable module prefix is imported and the rest is read as attributes, so
    ``'torch.optim.SGD'`` and ``'os.path.join'`` both work. A module that exists but fails
    while importing raises ``ImportError`` (chained): that is a bug to show, not a missing name.
    """
    parts = path.split(".")
    if len(parts) < 2 or not all(parts):
        return None, f"{path!r} is not a dotted path like 'package.module.Name'"
    why = f"no module named {parts[0]!r}"
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as err:
            missing = err.name
            if missing is None or module_name == missing or module_name.startswith(missing + "."):
                why = f"no module named {missing or module_name!r}"
                continue
            raise ImportError(f"importing {module_name!r} for {path!r} failed: {err}") from err
        except Exception as err:
            raise ImportError(f"importing {module_name!r} for {path!r} failed: {err}") from err
        obj = module
        for depth, attr in enumerate(parts[split:], start=split):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                owner = ".".join(parts[:depth])
                return None, f"{owner!r} has no attribute {attr!r}"
        return obj, ""
    return None, why
