"""HTTPBackend: reading http(s) URLs (MMEngine's ``mmengine.fileio.backends.http_backend``)."""

from __future__ import annotations

import contextlib
import os
import tempfile
import urllib.parse
from collections.abc import Iterator
from typing import Any

from .base import BaseStorageBackend

__all__ = ["HTTPBackend"]

#: seconds a read of a URL waits for the server (to connect, and for each further byte)
#: before it fails with a TimeoutError, instead of hanging a run (and its other ranks)
URL_TIMEOUT_S = 60.0


def open_url(url: str, timeout: float | None = None) -> Any:
    """The response to a GET of ``url`` (a context manager), failing after ``timeout``
    seconds (default :data:`URL_TIMEOUT_S`) without an answer."""
    import urllib.request  # only for URLs: it costs start-up time otherwise

    return urllib.request.urlopen(url, timeout=URL_TIMEOUT_S if timeout is None else timeout)


class HTTPBackend(BaseStorageBackend):
    """Reads http(s) URLs (``get``, ``get_text``, ``get_local_path``); the functions of
    ``runnerx.fileio`` use it for paths that start with ``http://`` or ``https://``.

    .. code-block:: python

        classes = list_from_file('https://host/classes.txt')   # read through HTTPBackend
    """

    def get(self, filepath: str) -> bytes:
        """The body of the response to a GET of the URL ``filepath`` (a server that does not
        answer for :data:`URL_TIMEOUT_S` seconds is a TimeoutError)."""
        with open_url(filepath) as response:
            return response.read()

    def get_text(self, filepath: str, encoding: str = "utf-8") -> str:
        """The body of the URL ``filepath``, decoded with ``encoding``."""
        return self.get(filepath).decode(encoding)

    @contextlib.contextmanager
    def get_local_path(self, filepath: str) -> Iterator[str]:
        """A temporary file holding the URL's body (with the URL's suffix, so that readers
        that go by it work), removed when the ``with`` block ends.

        .. code-block:: python

            with backend.get_local_path('https://host/ann.json') as path:
                annotations = json.load(open(path))
        """
        suffix = os.path.splitext(urllib.parse.urlsplit(filepath).path)[1]
        handle, temporary = tempfile.mkstemp(suffix=suffix)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(self.get(filepath))
            yield temporary
        finally:
            os.unlink(temporary)
