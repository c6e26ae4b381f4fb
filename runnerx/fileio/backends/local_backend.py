"""LocalBackend: files on a local disk (MMEngine's ``mmengine.fileio.backends.local_backend``),
the one implementation behind ``runnerx.fileio``'s functions for local paths; writes are
atomic. HardDiskBackend is MMEngine's deprecated alias."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterator
from typing import Any

from ..atomic import atomic_write
from .base import BaseStorageBackend

__all__ = ["HardDiskBackend", "LocalBackend"]

PathLike = str | os.PathLike


class LocalBackend(BaseStorageBackend):
    """Files on a local disk, with MMEngine's ``LocalBackend`` methods; ``put`` and
    ``put_text`` write atomically (a crash leaves the old file or the whole new one).

    .. code-block:: python

        backend = get_file_backend('data/imagenet')       # a LocalBackend
        for name in backend.list_dir_or_file('data/imagenet', list_dir=False, suffix='.jpg'):
            image = backend.get(backend.join_path('data/imagenet', name))
    """

    _allow_symlink = True

    def get(self, filepath: PathLike) -> bytes:
        """The bytes of a file."""
        with open(filepath, "rb") as file:
            return file.read()

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The text of a file, decoded with ``encoding``."""
        with open(filepath, encoding=encoding) as file:
            return file.read()

    def put(self, obj: bytes, filepath: PathLike) -> None:
        """Write ``obj`` to ``filepath`` atomically, creating its folder if needed."""
        with atomic_write(filepath, binary=True) as file:
            file.write(obj)

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        """Write the text ``obj`` to ``filepath`` atomically, creating its folder if needed."""
        with atomic_write(filepath, encoding=encoding) as file:
            file.write(obj)

    def exists(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` exists (a file or a folder)."""
        return os.path.exists(filepath)

    def isdir(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is a folder."""
        return os.path.isdir(filepath)

    def isfile(self, filepath: PathLike) -> bool:
        """Whether ``filepath`` is a file."""
        return os.path.isfile(filepath)

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        """``filepath`` and ``filepaths`` joined into one path (``os.path.join``)."""
        return os.path.join(filepath, *filepaths)

    @contextlib.contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[PathLike]:
        """``filepath`` itself, for the ``with`` block (it is local already, and is kept)."""
        yield filepath

    def copyfile(self, src: PathLike, dst: PathLike) -> str:
        """Copy the file ``src`` to ``dst`` (into it, under its own name, if ``dst`` is a
        folder) and return where it went; an existing file is replaced."""
        return shutil.copy(src, dst)

    def copytree(self, src: PathLike, dst: PathLike) -> str:
        """Copy the folder ``src`` and everything in it to ``dst``, which must not exist yet
        (``FileExistsError``), and return ``dst``."""
        return shutil.copytree(src, dst)

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> str:
        """:meth:`copyfile` (the local disk is the store)."""
        return self.copyfile(src, dst)

    def copyfile_to_local(self, src: PathLike, dst: PathLike) -> str:
        """:meth:`copyfile` (the local disk is the store)."""
        return self.copyfile(src, dst)

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> str:
        """:meth:`copytree` (the local disk is the store)."""
        return self.copytree(src, dst)

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> str:
        """:meth:`copytree` (the local disk is the store)."""
        return self.copytree(src, dst)

    def remove(self, filepath: PathLike) -> None:
        """Remove a file (``FileNotFoundError`` if there is none, ``IsADirectoryError`` for a
        folder: use :meth:`rmtree`)."""
        if not os.path.exists(filepath):
            raise FileNotFoundError(f"remove: {os.fspath(filepath)!r} does not exist")
        if os.path.isdir(filepath):
            raise IsADirectoryError(
                f"remove: {os.fspath(filepath)!r} is a folder; rmtree removes folders"
            )
        os.remove(filepath)

    def rmtree(self, dir_path: PathLike) -> None:
        """Remove a folder and everything in it."""
        shutil.rmtree(dir_path)

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """Make ``dst`` a symlink to ``src``; where the file system refuses one, copy ``src``
        (a file or a folder) to ``dst`` instead. True if it made a symlink."""
        try:
            os.symlink(src, dst)
        except OSError:
            if os.path.isfile(src):
                self.copyfile(src, dst)
            else:
                self.copytree(src, dst)
            return False
        return True

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """The folders and/or files under ``dir_path``, as paths relative to it, in no set
        order.

        ``suffix`` (a str or a tuple of them) keeps the files whose names end with it and
        needs ``list_dir=False``; ``recursive`` goes into sub-folders. As in MMEngine, files
        whose names start with ``.`` are left out, folders are not.
        """
        if list_dir and suffix is not None:
            raise TypeError(
                "list_dir_or_file: suffix selects files, so it needs list_dir=False "
                f"(got suffix={suffix!r} with list_dir=True)"
            )
        if suffix is not None and not isinstance(suffix, (str, tuple)):
            raise TypeError(
                f"list_dir_or_file: suffix must be a str or a tuple of str, not {suffix!r}"
            )
        root = os.fspath(dir_path)
        return _scan(root, root, list_dir, list_file, suffix, recursive)


def _scan(
    folder: str, root: str, list_dir: bool, list_file: bool, suffix: Any, recursive: bool
) -> Iterator[str]:
    with os.scandir(folder) as entries:
        for entry in entries:
            relative = os.path.relpath(entry.path, root)
            if entry.is_file():
                keep = suffix is None or relative.endswith(suffix)
                if list_file and keep and not entry.name.startswith("."):
                    yield relative
            elif entry.is_dir():
                if list_dir:
                    yield relative
                if recursive:
                    yield from _scan(entry.path, root, list_dir, list_file, suffix, recursive)


class HardDiskBackend(LocalBackend):
    """MMEngine's old name of :class:`LocalBackend` (``FileClient``'s ``'disk'``); warns, as
    MMEngine does, that the name will go."""

    def __init__(self) -> None:
        from runnerx.logging.logger import print_log  # the logging package imports torch

        print_log(
            '"HardDiskBackend" is the alias of "LocalBackend" and the former will be '
            "deprecated in future.",
            logger="current",
            level=logging.WARNING,
        )
