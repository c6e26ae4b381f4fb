"""Storage backends (MMEngine's ``mmengine.fileio.backends``): where ``runnerx.fileio``'s
functions read and write. ``LocalBackend`` (local paths), ``HTTPBackend`` (http(s) URLs,
read-only) and ``LmdbBackend`` (an LMDB database, read-only) are registered; add your own
with :func:`register_backend`. Importing this package imports neither lmdb nor urllib.request.
"""

from .base import BaseStorageBackend
from .http_backend import HTTPBackend
from .lmdb_backend import LmdbBackend
from .local_backend import HardDiskBackend, LocalBackend
from .registry_utils import backends, get_file_backend, prefix_to_backends, register_backend

__all__ = [
    "BaseStorageBackend",
    "HTTPBackend",
    "HardDiskBackend",
    "LmdbBackend",
    "LocalBackend",
    "backends",
    "get_file_backend",
    "prefix_to_backends",
    "register_backend",
]
