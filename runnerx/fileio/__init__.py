"""File I/O: MMEngine's ``mmengine.fileio`` functions for local files (and reading http(s)
URLs), safe by default, and the atomic writes that configs and checkpoints use.

- ``load`` / ``dump``: JSON, YAML and pickle by suffix or ``file_format``; pickles rebuild
  only plain data and YAML builds no Python objects unless ``load(..., unsafe_load=True)``;
  ``dump`` to a path is atomic.
- ``get``, ``get_text``, ``put``, ``put_text``, ``exists``, ``isfile``, ``isdir``,
  ``join_path``, ``list_dir_or_file``, ``get_local_path``, ``remove``, ``rmtree``,
  ``copyfile``, ``copytree``; ``list_from_file``, ``dict_from_file``.
- ``atomic_write``, ``after_pending_writes``, ``wait_for_pending_writes``: crash-safe writes,
  optionally finished on a background thread.

Importing this package imports neither PyYAML, numpy nor torch.
"""

from .atomic import after_pending_writes, atomic_write, wait_for_pending_writes
from .handlers import (
    BaseFileHandler,
    JsonHandler,
    PickleHandler,
    YamlHandler,
    file_handlers,
    register_handler,
)
from .load_dump import dump, load
from .parse import dict_from_file, list_from_file
from .paths import (
    copyfile,
    copytree,
    exists,
    get,
    get_local_path,
    get_text,
    isdir,
    isfile,
    join_path,
    list_dir_or_file,
    put,
    put_text,
    remove,
    rmtree,
)
from .plain_pickle import UnsafePickleError

__all__ = [
    "BaseFileHandler",
    "JsonHandler",
    "PickleHandler",
    "UnsafePickleError",
    "YamlHandler",
    "after_pending_writes",
    "atomic_write",
    "copyfile",
    "copytree",
    "dict_from_file",
    "dump",
    "exists",
    "file_handlers",
    "get",
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
    "register_handler",
    "remove",
    "rmtree",
    "wait_for_pending_writes",
]
