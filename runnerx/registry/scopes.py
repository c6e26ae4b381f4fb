"""How a scope name reaches a registry beyond the tree as it stands: MMEngine's own scope
``mmengine`` stands for runnerx's root scope, and a package's scope that is not in the tree yet
gets ``<scope>.registry`` imported once, as MMEngine does (OpenMMLab packages create their
child registries there, and their configs rely on that import: ``default_scope='mmdet'``)."""

from __future__ import annotations

import importlib

#: MMEngine's root scope: ``'mmengine.IterTimerHook'``, ``_scope_='mmengine'`` and
#: ``default_scope='mmengine'`` in MMEngine configs mean runnerx's root registries here
MMENGINE_SCOPE = "mmengine"
#: the scope of runnerx's root registries
ROOT_SCOPE = "runnerx"

# scope -> None once <scope>.registry was imported, or why importing it failed
_imported: dict[str, str | None] = {}


def alias_of(scope: str) -> str | None:
    """The scope that ``scope`` stands for when no registry has it (``'mmengine'`` ->
    ``'runnerx'``), or None."""
    return ROOT_SCOPE if scope == MMENGINE_SCOPE else None


def import_scope_registry(scope: str) -> bool:
    """Import ``<scope>.registry`` unless that was tried before; True when this call imported
    it (so the registry tree may have grown). An ImportError is remembered for
    :func:`import_failure`; any other error in that module is raised as it is."""
    if scope in _imported or alias_of(scope) is not None or not scope.isidentifier():
        return False
    _imported[scope] = None  # first: the module may look scopes up while it is imported
    try:
        importlib.import_module(f"{scope}.registry")
    except ImportError as error:
        _imported[scope] = str(error) or type(error).__name__
        return False
    except BaseException:
        del _imported[scope]  # a bug in that module: report it again on the next lookup
        raise
    return True


def import_failure(scope: str) -> str | None:
    """Why importing ``<scope>.registry`` failed, or None (it worked, or was not tried)."""
    return _imported.get(scope)
