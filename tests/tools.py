"""The scripts under tools/ loaded as modules, so that tests call their functions in-process."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parents[1]


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as a fresh module (``load_tool('test').main([...])``)."""
    spec = importlib.util.spec_from_file_location(
        f"runnerx_{name}_tool", ROOT / "tools" / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
