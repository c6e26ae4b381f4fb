"""File I/O: MMEngine's ``mmengine.fileio`` functions and storage backends (local files,
reading http(s) URLs and LMDB databases, and backends users register), safe by default, and
the atomic writes that configs and checkpoints use.

- ``load`` / ``dump``: JSON, YAML and pickle by suffix or ``file_format``; pickles rebuild
  only plain data and YAML builds no Python objects unless ``load(..., unsafe_load=True)``;
  ``dump`` to a path is atomic.
- ``get``, ``get_text``, ``put``, ``put_text``, ``exists``, ``isfile``, ``isdir``,
  ``join_path``, ``list_dir_or_file``, ``get_local_path``, ``remove``, ``rmtree``,
  ``copyfile``, ``copytree``, ``copyfile_from_local``, ``copyfile_to_local``,
  ``copytree_from_local``, ``copytree_to_local``, ``copy_if_symlink_fails``,
  ``generate_presigned_url``; ``list_from_file``, ``dict_from_file``.
- ``get_file_backend``, ``register_backend``, ``BaseStorageBackend``, ``LocalBackend``,
  ``HTTPBackend``, ``LmdbBackend``; MMEngine's deprecated ``FileClient`` and
  ``HardDiskBackend``.
- ``atomic_write``, ``after_pending_writes``, ``wait_for_pending_writes``, ``failed_write``:
  crash-safe writes, optionally finished on a background thread.

Importing this package imports neither PyYAML, numpy, torch, lmdb nor urllib.request.
"""

from .atomic import after_pending_writes, atomic_write, failed_write, wait_for_pending_writes
from .backends import (
    BaseStorageBackend,
    HardDiskBackend,
    HTTPBackend,
    LmdbBackend,
    LocalBackend,
    get_file_backend,
    register_backend,
)
from .file_client import FileClient
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
    copy_if_symlink_fails,
    copyfile,
    copyfile_from_local,
    copyfile_to_local,
    copytree,
    copytree_from_local,
    copytree_to_local,
    exists,
    generate_presigned_url,
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
    "BaseStorageBackend",
    "FileClient",
    "HTTPBackend",
    "HardDiskBackend",
    "JsonHandler",
    "LmdbBackend",
    "LocalBackend",
    "PickleHandler",
    "UnsafePickleError",
    "YamlHandler",
    "after_pending_writes",
    "atomic_write",
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
    "failed_write",
    "file_handlers",
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
    "wait_for_pending_writes",
]
