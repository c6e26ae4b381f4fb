"""A checkpoint URL that cannot be fetched: one error that names the URL (and the name or
config key that led to it) and says what failed, with the network's error as its cause::

    CheckpointDownloadError: load_from: open-mmlab://resnet50_v1c: downloading
    https://download.openmmlab.com/... failed: the host name does not resolve (no network,
    or a wrong host name); ...
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import urllib.error
from collections.abc import Iterator

#: what fetching a URL raises when the network or the server fails
_NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError)


class CheckpointDownloadError(OSError):
    """A checkpoint URL could not be fetched; the network's (or server's) error is the
    ``__cause__``. An ``OSError``, as that error is."""


@contextlib.contextmanager
def download_errors(url: str) -> Iterator[None]:
    """Inside, a failed download of ``url`` raises :class:`CheckpointDownloadError`."""
    try:
        yield
    except _NETWORK_ERRORS as error:
        raise CheckpointDownloadError(
            f"downloading {url} failed: {_what_failed(error)}; check the URL and the network, "
            "or download the file yourself and give its local path"
        ) from error


@contextlib.contextmanager
def download_errors_named(name: str) -> Iterator[None]:
    """Inside, a :class:`CheckpointDownloadError` gets ``name`` (a model-zoo name, a config
    key) in front of its message; its cause stays the network's error."""
    try:
        yield
    except CheckpointDownloadError as error:
        raise CheckpointDownloadError(f"{name}: {error}") from error.__cause__


def _what_failed(error: BaseException) -> str:
    if isinstance(error, urllib.error.HTTPError):
        hint = {404: "no file at that URL", 401: "access denied", 403: "access denied"}
        extra = f" ({hint[error.code]})" if error.code in hint else ""
        return f"the server answered HTTP {error.code} {error.reason}{extra}"
    reason = error.reason if isinstance(error, urllib.error.URLError) else error
    if isinstance(reason, socket.gaierror):
        return f"the host name does not resolve (no network, or a wrong host name: {reason})"
    if isinstance(reason, ConnectionRefusedError):
        return "the connection was refused (no server listens at that host and port)"
    if isinstance(reason, TimeoutError):
        return "no answer in time (a slow or missing network)"
    if isinstance(reason, BaseException):
        return f"{type(reason).__name__}: {reason}"
    return str(reason)
