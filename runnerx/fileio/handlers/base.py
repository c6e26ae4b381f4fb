"""BaseFileHandler: how one file format is read and written (MMEngine's ``BaseFileHandler``
API, at its path ``mmengine.fileio.handlers.base``)."""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod
from typing import IO, Any

from ..atomic import atomic_write

__all__ = ["BaseFileHandler"]


class BaseFileHandler(metaclass=ABCMeta):
    """How one file format is read and written (subclass it and :func:`register_handler` it
    to add a format). ``str_like`` says whether the format is text (``True``) or bytes.

    .. code-block:: python

        @register_handler('txt')
        class TxtHandler(BaseFileHandler):
            def load_from_fileobj(self, file, **kwargs):
                return file.read()

            def dump_to_fileobj(self, obj, file, **kwargs):
                file.write(str(obj))

            def dump_to_str(self, obj, **kwargs):
                return str(obj)
    """

    str_like = True

    @abstractmethod
    def load_from_fileobj(self, file: IO, **kwargs: Any) -> Any:
        """The object read from an open file."""

    @abstractmethod
    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """Write ``obj`` to an open file."""

    @abstractmethod
    def dump_to_str(self, obj: Any, **kwargs: Any) -> str | bytes:
        """``obj`` as this format's text (or bytes, for a bytes format)."""

    def load_from_path(
        self, filepath: str | os.PathLike, mode: str | None = None, **kwargs: Any
    ) -> Any:
        """The object read from a file (text formats are read as UTF-8)."""
        mode = mode or ("r" if self.str_like else "rb")
        with open(filepath, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as file:
            return self.load_from_fileobj(file, **kwargs)

    def dump_to_path(
        self, obj: Any, filepath: str | os.PathLike, mode: str | None = None, **kwargs: Any
    ) -> None:
        """Write ``obj`` to a file atomically: a failure leaves the old file as it was."""
        binary = "b" in mode if mode else not self.str_like
        with atomic_write(filepath, binary=binary) as file:
            self.dump_to_fileobj(obj, file, **kwargs)


def name_of(file: IO) -> str:
    """How error messages name an open file: its path, or 'the file object'."""
    name = getattr(file, "name", None)
    return name if isinstance(name, str) else "the file object"
