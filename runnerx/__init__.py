"""runnerx: MMEngine-style configs and registries, and a fast, dependable training Runner.

Only the public API lives here: Config, the registries and their build helpers, and the
Runner (``from runnerx import Runner``). Importing runnerx does not import torch or anything
optional; the Runner is loaded when first named.

The names MMEngine's top level offers (``from mmengine import load, MessageHub``) are here
too, so that ported code changes only ``mmengine`` to ``runnerx``; each comes from the
module named in ``_MMENGINE_NAMES`` when it is first used.
"""

from . import registry as _registry
from . import utils as _utils
from .config import Config, ConfigDict, DictAction, read_base
from .registry import *  # noqa: F403  (the root registries, Registry, build_from_cfg, ...)
from .version import __version__, version_info

#: module -> the names of MMEngine's top level that it gives (every name of runnerx.utils,
#: which is mmengine.utils's list, comes from there)
_MMENGINE_NAMES = {
    "runnerx.fileio": (
        "BaseFileHandler",
        "BaseStorageBackend",
        "FileClient",
        "HTTPBackend",
        "HardDiskBackend",
        "JsonHandler",
        "LmdbBackend",
        "LocalBackend",
        "PickleHandler",
        "YamlHandler",
        "copy_if_symlink_fails",
        "copyfile",
        "copyfile_from_local",
        "copyfile_to_local",
        "copytree",
        "copytree_from_local",
        "copytree_to_local",
        "dict_from_file",
        "dump",
        "exists",
        "generate_presigned_url",
        "get",
        "get_file_backend",
        "get_local_path",
        "get_text",
        "isdir",
        "isfile",
        "join_path",
        "list_dir_or_file",
        "list_from_file",
        "load",
        "put",
        "put_text",
        "register_backend",
        "register_handler",
        "remove",
        "rmtree",
    ),
    "runnerx.logging": ("HistoryBuffer", "MMLogger", "MessageHub", "print_log"),
    "runnerx.utils": tuple(_utils.__all__),
}
#: runnerx's own top-level names beside MMEngine's, loaded when first used as well
_RUNNERX_NAMES = {"runnerx.runner": ("Runner",)}
_MODULE_OF = {
    name: module
    for module, names in (*_MMENGINE_NAMES.items(), *_RUNNERX_NAMES.items())
    for name in names
}

__getattr__ = _utils.lazy_attributes(__name__, _MODULE_OF)

__all__ = [
    "Config",
    "ConfigDict",
    "DictAction",
    "__version__",
    "read_base",
    "version_info",
    *_registry.__all__,
    *sorted(_MODULE_OF),
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
