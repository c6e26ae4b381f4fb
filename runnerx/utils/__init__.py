"""Every name of ``mmengine.utils``: code that imports them runs with its imports changed to
``runnerx.utils`` (and ``mmengine.utils.dl_utils`` to ``runnerx.utils.dl_utils``).

- misc: ``is_str``, ``is_seq_of``, ``is_list_of``, ``is_tuple_of``, ``iter_cast``,
  ``list_cast``, ``tuple_cast``, ``slice_list``, ``concat_list``, ``to_1tuple`` ...
  ``to_4tuple``, ``to_ntuple``, ``apply_to``, ``has_method``, ``is_method_overridden``,
  ``import_modules_from_strings``, ``get_object_from_string``
- deprecation: ``deprecated_api_warning``, ``deprecated_function``
- package_utils: ``is_installed``, ``get_installed_path``, ``install_package``,
  ``call_command``, ``check_prerequisites``, ``requires_package``, ``requires_executable``
- path: ``mkdir_or_exist``, ``scandir``, ``check_file_exist``, ``symlink``, ``fopen``,
  ``is_filepath``, ``is_abs``
- progressbar: ``ProgressBar``, ``track_progress``, ``track_iter_progress``,
  ``track_parallel_progress``, ``track_progress_rich``
- timer: ``Timer``, ``TimerError``, ``check_time``
- version_utils: ``digit_version``, ``get_git_hash``
- manager: ``ManagerMixin``, ``ManagerMeta``

Each module is imported when one of its names is first used, so that ``import runnerx``
(whose registries use :class:`ManagerMixin`) stays fast; :func:`lazy_attributes` does that
here and for the names ``runnerx.model`` and ``runnerx.runner`` take from elsewhere.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_attributes(package: str, sources: dict[str, str]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``: ``sources`` maps each name to
    ``'module'`` (the same name there) or ``'module:attribute'``; the name is imported on
    first use and kept in the package's namespace::

        __getattr__ = lazy_attributes(__name__, {'merge_dict': 'runnerx.utils.misc'})
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attribute = source.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        namespace[name] = value
        return value

    return __getattr__


_NAMES_BY_MODULE = {
    "deprecation": ("deprecated_api_warning", "deprecated_function"),
    "manager": ("ManagerMeta", "ManagerMixin"),
    "misc": (
        "apply_to",
        "concat_list",
        "get_object_from_string",
        "has_method",
        "import_modules_from_strings",
        "is_list_of",
        "is_method_overridden",
        "is_seq_of",
        "is_str",
        "is_tuple_of",
        "iter_cast",
        "list_cast",
        "slice_list",
        "to_1tuple",
        "to_2tuple",
        "to_3tuple",
        "to_4tuple",
        "to_ntuple",
        "tuple_cast",
    ),
    "package_utils": (
        "call_command",
        "check_prerequisites",
        "get_installed_path",
        "install_package",
        "is_installed",
        "requires_executable",
        "requires_package",
    ),
    "path": (
        "check_file_exist",
        "fopen",
        "is_abs",
        "is_filepath",
        "mkdir_or_exist",
        "scandir",
        "symlink",
    ),
    "progressbar": (
        "ProgressBar",
        "track_iter_progress",
        "track_parallel_progress",
        "track_progress",
    ),
    "progressbar_rich": ("track_progress_rich",),
    "timer": ("Timer", "TimerError", "check_time"),
    "version_utils": ("digit_version", "get_git_hash"),
}
_MODULE_OF = {name: module for module, names in _NAMES_BY_MODULE.items() for name in names}

__all__ = sorted(_MODULE_OF)


__getattr__ = lazy_attributes(
    __name__, {name: f"{__name__}.{module}" for name, module in _MODULE_OF.items()}
)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
