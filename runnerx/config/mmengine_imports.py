"""``from mmengine.<module> import <Name>`` in a config file, read without importing MMEngine.

mmdet 3.x's pure-Python configs import MMEngine's runtime classes to name them as ``type=``::

    from mmengine.config import read_base
    from mmengine.hooks import IterTimerHook
    from mmengine.runner.loops import EpochBasedTrainLoop

runnerx offers MMEngine's import paths with ``runnerx`` in place of ``mmengine``
(``runnerx.hooks.IterTimerHook``), so in a config file such an import binds the object of
that name in ``runnerx.<module>``: runnerx's class, whether MMEngine is installed or not.
A name runnerx does not offer there is bound to the string ``'mmengine.<module>.<Name>'``,
which stays lazy as MMEngine keeps it: the registry resolves it when it is built, to runnerx's
entry of that name (or an error that names the config key). After ``import mmengine``,
``mmengine.hooks.IterTimerHook`` is runnerx's class the same way.
"""

from __future__ import annotations

import builtins
import importlib
from typing import Any

_MMENGINE = "mmengine"
_MISSING = object()


def runnerx_counterpart(module: str, name: str) -> Any:
    """What ``from <module> import <name>`` binds in a config, for an MMEngine ``module``: the
    object (or submodule) ``name`` of ``runnerx<module without 'mmengine'>``, else the string
    ``'<module>.<name>'``. ``runnerx_counterpart('mmengine.hooks', 'IterTimerHook')`` is
    :class:`runnerx.hooks.IterTimerHook`."""
    path = "runnerx" + module[len(_MMENGINE) :]
    found = _import_if_present(path)
    if found is not None:
        found = getattr(found, name, _MISSING)
        if found is _MISSING:
            found = _import_if_present(f"{path}.{name}")
    return f"{module}.{name}" if found is None or found is _MISSING else found


def _import_if_present(path: str) -> Any:
    """The module at ``path``, or None when it (or a package above it) does not exist; an
    import that fails inside an existing module is raised."""
    try:
        return importlib.import_module(path)
    except ModuleNotFoundError as error:
        if error.name is not None and (path + ".").startswith(error.name + "."):
            return None
        raise


class _MMEngineModule:
    """What ``from mmengine.<module> import ...`` in a config takes its names from."""

    __slots__ = ("__path",)

    def __init__(self, path: str) -> None:
        self.__path = path

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # `import *` looks for __all__: not offered
            raise AttributeError(name)
        return runnerx_counterpart(self.__path, name)


def _config_import(
    name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0
) -> Any:
    if level == 0 and (name == _MMENGINE or name.startswith(_MMENGINE + ".")):
        # `import mmengine.x` binds `mmengine`, whose attribute x is then runnerx.x
        return _MMEngineModule(name if fromlist else _MMENGINE)
    return builtins.__import__(name, globals, locals, fromlist, level)


#: the builtins a config file runs with: Python's, with imports of MMEngine's modules taken
#: from runnerx's
CONFIG_BUILTINS = {**vars(builtins), "__import__": _config_import}
