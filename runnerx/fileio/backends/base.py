"""BaseStorageBackend: what every storage backend has (MMEngine's
``mmengine.fileio.backends.base``)."""

from __future__ import annotations

import logging
from abc import ABCMeta, abstractmethod
from typing import Any

__all__ = ["BaseStorageBackend"]


class BaseStorageBackend(metaclass=ABCMeta):
    """A place files are read from (and maybe written to): subclass it, define at least
    ``get`` (bytes) and ``get_text`` (str), add what the store can do (``put``, ``exists``,
    ``list_dir_or_file``, ...; :class:`LocalBackend` has them all), and register it with
    :func:`register_backend` so that ``runnerx.fileio``'s functions reach it.

    .. code-block:: python

        @register_backend('memory', prefixes='mem')
        class MemoryBackend(BaseStorageBackend):
            files = {}

            def get(self, filepath):
                return self.files[str(filepath)]

            def get_text(self, filepath, encoding='utf-8'):
                return self.get(filepath).decode(encoding)
    """

    # Whether the store can hold symlinks; MMEngine has deprecated the flag.
    _allow_symlink = False

    @property
    def allow_symlink(self) -> bool:
        """Whether the store can hold symlinks (deprecated in MMEngine, warns as it does)."""
        from runnerx.logging.logger import print_log  # the logging package imports torch

        print_log(
            "allow_symlink will be deprecated in future", logger="current", level=logging.WARNING
        )
        return self._allow_symlink

    @property
    def name(self) -> str:
        """The backend's class name."""
        return type(self).__name__

    @abstractmethod
    def get(self, filepath: Any) -> bytes:
        """The bytes stored at ``filepath``."""

    @abstractmethod
    def get_text(self, filepath: Any, encoding: str = "utf-8") -> str:
        """The text stored at ``filepath``, decoded with ``encoding``."""
