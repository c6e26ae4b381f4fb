"""FileClient: MMEngine's deprecated front to the storage backends, which mmcv-era code still
builds (``FileClient(**file_client_args)``, ``FileClient.infer_client(file_client_args,
uri)``). New code uses :func:`get_file_backend` or the functions of ``runnerx.fileio``."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from typing import Any

from .backends import BaseStorageBackend, HardDiskBackend, HTTPBackend, LmdbBackend
from .backends.registry_utils import add_backend, cluster_note, uri_prefix

__all__ = ["FileClient", "HardDiskBackend"]


class FileClient:
    """A storage backend chosen by name (``backend='disk'``, ``'lmdb'``, ``'http'`` or one
    registered with :meth:`FileClient.register_backend`) or by URI prefix, built with
    ``kwargs``; the same arguments give the same object. Its methods call the backend's.
    Deprecated as in MMEngine: creating one logs a warning.

    .. code-block:: python

        client = FileClient.infer_client(dict(backend='disk'))
        client = FileClient.infer_client(uri='https://host/a.json')   # HTTPBackend
        data = client.get('https://host/a.json')

    FileClient keeps its own registry, as MMEngine's does: ``runnerx.fileio.register_backend``
    does not add to it.
    """

    _backends: dict[str, type[BaseStorageBackend]] = {
        "disk": HardDiskBackend,
        "lmdb": LmdbBackend,
        "http": HTTPBackend,
    }
    _prefix_to_backends: dict[str, type[BaseStorageBackend]] = {
        "http": HTTPBackend,
        "https": HTTPBackend,
    }
    _instances: dict[str, FileClient] = {}
    client: BaseStorageBackend

    def __new__(
        cls, backend: str | None = None, prefix: str | None = None, **kwargs: Any
    ) -> FileClient:
        from runnerx.logging.logger import print_log  # the logging package imports torch

        print_log(
            '"FileClient" will be deprecated in future. Please use io functions in '
            "runnerx.fileio (get_file_backend, get, put, ...)",
            logger="current",
            level=logging.WARNING,
        )
        if backend is None and prefix is None:
            backend = "disk"
        if backend is not None and backend not in cls._backends:
            raise ValueError(
                f"FileClient: backend {backend!r} is not supported; the supported ones are "
                f"{list(cls._backends)}. {cluster_note(backend)}Add one with "
                "FileClient.register_backend(name, MyBackend)."
            )
        if prefix is not None and prefix not in cls._prefix_to_backends:
            raise ValueError(
                f"FileClient: prefix {prefix!r} is not supported; the supported ones are "
                f"{list(cls._prefix_to_backends)}. Add one with "
                "FileClient.register_backend(name, MyBackend, prefixes=[...])."
            )
        key = ":".join([f"{backend}:{prefix}", *(f"{k}:{v}" for k, v in kwargs.items())])
        if key not in cls._instances:
            instance = super().__new__(cls)
            chosen = cls._backends[backend] if backend else cls._prefix_to_backends[prefix]
            instance.client = chosen(**kwargs)
            cls._instances[key] = instance
        return cls._instances[key]

    @property
    def name(self) -> str:
        """The backend's class name."""
        return self.client.name

    @property
    def allow_symlink(self) -> bool:
        """Whether the backend can hold symlinks."""
        return self.client.allow_symlink

    @staticmethod
    def parse_uri_prefix(uri: str | os.PathLike) -> str | None:
        """The prefix of ``uri`` ('s3' for 's3://b/k' and 'cluster:s3://b/k'), None for a
        path without '://'."""
        return uri_prefix(uri, "FileClient.parse_uri_prefix") or None

    @classmethod
    def infer_client(
        cls, file_client_args: dict | None = None, uri: str | os.PathLike | None = None
    ) -> FileClient:
        """The client ``file_client_args`` describes, else the one of ``uri``'s prefix (the
        local disk for a path without one)."""
        if file_client_args is None and uri is None:
            raise ValueError("FileClient.infer_client: give file_client_args or uri")
        if file_client_args is None:
            return cls(prefix=cls.parse_uri_prefix(uri))
        return cls(**file_client_args)

    @classmethod
    def register_backend(
        cls,
        name: str,
        backend: type[BaseStorageBackend] | None = None,
        force: bool = False,
        prefixes: str | list[str] | tuple[str, ...] | None = None,
    ) -> Callable | None:
        """Add ``backend`` to FileClient under ``name`` (and ``prefixes``); ``force`` replaces
        an earlier one and drops the clients made with it. A ``KeyError`` (MMEngine's type)
        for a name or prefix taken; a class decorator when ``backend`` is None."""

        def decorate(backend_cls: type[BaseStorageBackend]) -> type[BaseStorageBackend]:
            replaced = add_backend(
                cls._backends,
                cls._prefix_to_backends,
                name,
                backend_cls,
                force,
                prefixes,
                where="FileClient.register_backend",
                error=KeyError,
            )
            for key, instance in list(cls._instances.items()):
                if type(instance.client) in replaced:
                    del cls._instances[key]
            return backend_cls

        if backend is None:
            return decorate
        decorate(backend)
        return None

    def get(self, filepath: str | os.PathLike) -> bytes:
        """The backend's ``get``."""
        return self.client.get(filepath)

    def get_text(self, filepath: str | os.PathLike, encoding: str = "utf-8") -> str:
        """The backend's ``get_text``."""
        return self.client.get_text(filepath, encoding)

    def put(self, obj: bytes, filepath: str | os.PathLike) -> None:
        """The backend's ``put``."""
        self.client.put(obj, filepath)

    def put_text(self, obj: str, filepath: str | os.PathLike) -> None:
        """The backend's ``put_text``."""
        self.client.put_text(obj, filepath)

    def remove(self, filepath: str | os.PathLike) -> None:
        """The backend's ``remove``."""
        self.client.remove(filepath)

    def exists(self, filepath: str | os.PathLike) -> bool:
        """The backend's ``exists``."""
        return self.client.exists(filepath)

    def isdir(self, filepath: str | os.PathLike) -> bool:
        """The backend's ``isdir``."""
        return self.client.isdir(filepath)

    def isfile(self, filepath: str | os.PathLike) -> bool:
        """The backend's ``isfile``."""
        return self.client.isfile(filepath)

    def join_path(self, filepath: str | os.PathLike, *filepaths: str | os.PathLike) -> str:
        """The backend's ``join_path``."""
        return self.client.join_path(filepath, *filepaths)

    @contextlib.contextmanager
    def get_local_path(self, filepath: str | os.PathLike) -> Iterator[str]:
        """The backend's ``get_local_path`` (given ``filepath`` as a str)."""
        with self.client.get_local_path(str(filepath)) as local:
            yield local

    def list_dir_or_file(
        self,
        dir_path: str | os.PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """The backend's ``list_dir_or_file``."""
        yield from self.client.list_dir_or_file(dir_path, list_dir, list_file, suffix, recursive)
