"""MMEngine's file functions (``get``, ``put``, ``exists``, ``list_dir_or_file``, ...) for
local paths, and for reading http(s) URLs.

Every function takes MMEngine's ``backend_args``: ``None`` (the backend follows from the path)
or ``dict(backend='local')`` run here; a dict naming another backend (``'petrel'``, ``'lmdb'``,
``'memcached'``), a path with another prefix (``s3://``) or options the local disk does not
take are refused with an error that names them. Writes (``put``, ``put_text``) are atomic.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from .atomic import atomic_write

#: What ``backend_args['backend']`` (or ``file_client_args['backend']``) may name.
LOCAL_BACKENDS = ("local", "disk")
URL_PREFIXES = ("http", "https")
#: The functions that read http(s) URLs (named by the error of the others).
URL_READERS = "get, get_text, get_local_path, load, list_from_file and dict_from_file"

PathLike = str | os.PathLike


def resolve_path(
    filepath: PathLike, backend_args: Mapping | None, action: str, url_ok: bool = False
) -> tuple[str, bool]:
    """``(path, is_url)`` for ``filepath``, once it is known to be a local path (or, where
    ``url_ok``, an http(s) URL); errors name ``action``, the path and the backend refused."""
    if not isinstance(filepath, (str, os.PathLike)):
        raise TypeError(f"{action}: the path must be a str or a Path, not {filepath!r}")
    path = os.fspath(filepath)
    backend = _backend_named(backend_args, action)
    if backend is None:
        prefix = _uri_prefix(path)
        if prefix and prefix not in URL_PREFIXES:
            mmengine_name = "petrel" if prefix in ("s3", "petrel") else prefix
            raise ValueError(
                f"{action}: {path!r} needs MMEngine's {mmengine_name!r} storage backend; "
                "runnerx.fileio reads and writes local files, and reads http(s) URLs. Copy "
                "the files to a local disk and name them by their local paths."
            )
        backend = "http" if prefix else "local"
    if backend == "http" and not url_ok:
        raise NotImplementedError(
            f"{action}: {path!r} is read over http(s), and runnerx.fileio only reads URLs "
            f"(with {URL_READERS})"
        )
    return path, backend == "http"


def local_path(filepath: PathLike, backend_args: Mapping | None, action: str) -> str:
    """``filepath`` as a str, once it is known to be a local path (see :func:`resolve_path`)."""
    return resolve_path(filepath, backend_args, action)[0]


def get(filepath: PathLike, backend_args: dict | None = None) -> bytes:
    """The bytes of a file (or of an http(s) URL's body)."""
    path, is_url = resolve_path(filepath, backend_args, "get", url_ok=True)
    if is_url:
        import urllib.request  # only for URLs: it costs start-up time otherwise

        with urllib.request.urlopen(path) as response:
            return response.read()
    with open(path, "rb") as file:
        return file.read()


def get_text(filepath: PathLike, encoding: str = "utf-8", backend_args: dict | None = None) -> str:
    """The text of a file (or of an http(s) URL's body), decoded with ``encoding``."""
    path, is_url = resolve_path(filepath, backend_args, "get_text", url_ok=True)
    if is_url:
        return get(path).decode(encoding)
    with open(path, encoding=encoding) as file:
        return file.read()


def put(obj: bytes, filepath: PathLike, backend_args: dict | None = None) -> None:
    """Write ``obj`` to ``filepath`` atomically, creating its folder if needed."""
    with atomic_write(local_path(filepath, backend_args, "put"), binary=True) as file:
        file.write(obj)


def put_text(obj: str, filepath: PathLike, backend_args: dict | None = None) -> None:
    """Write the text ``obj`` to ``filepath`` (UTF-8) atomically, creating its folder if
    needed."""
    with atomic_write(local_path(filepath, backend_args, "put_text")) as file:
        file.write(obj)


def exists(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` exists (a file or a folder)."""
    return os.path.exists(local_path(filepath, backend_args, "exists"))


def isfile(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` is a file."""
    return os.path.isfile(local_path(filepath, backend_args, "isfile"))


def isdir(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` is a folder."""
    return os.path.isdir(local_path(filepath, backend_args, "isdir"))


def join_path(filepath: PathLike, *filepaths: PathLike, backend_args: dict | None = None) -> str:
    """``filepath`` and ``filepaths`` joined into one path (``os.path.join``)."""
    return os.path.join(local_path(filepath, backend_args, "join_path"), *filepaths)


@contextlib.contextmanager
def get_local_path(filepath: PathLike, backend_args: dict | None = None) -> Iterator[str]:
    """A local path holding ``filepath``'s content, for the ``with`` block: a local path is
    given as it is (and kept); a URL is downloaded to a temporary file (with the URL's
    suffix), removed when the block ends.

    .. code-block:: python

        with get_local_path('https://host/ann.json') as path:
            annotations = json.load(open(path))
    """
    path, is_url = resolve_path(filepath, backend_args, "get_local_path", url_ok=True)
    if not is_url:
        yield path
        return
    suffix = os.path.splitext(urllib.parse.urlsplit(path).path)[1]
    handle, temporary = tempfile.mkstemp(suffix=suffix)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(get(path))
        yield temporary
    finally:
        os.unlink(temporary)


def list_dir_or_file(
    dir_path: PathLike,
    list_dir: bool = True,
    list_file: bool = True,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    backend_args: dict | None = None,
) -> Iterator[str]:
    """The folders and/or files under ``dir_path``, as paths relative to it, in no set order.

    ``suffix`` (a str or a tuple of them) keeps the files whose names end with it and needs
    ``list_dir=False``; ``recursive`` goes into sub-folders. As in MMEngine, files whose
    names start with ``.`` are left out, folders are not.
    """
    root = local_path(dir_path, backend_args, "list_dir_or_file")
    if list_dir and suffix is not None:
        raise TypeError(
            "list_dir_or_file: suffix selects files, so it needs list_dir=False "
            f"(got suffix={suffix!r} with list_dir=True)"
        )
    if suffix is not None and not isinstance(suffix, (str, tuple)):
        raise TypeError(f"list_dir_or_file: suffix must be a str or a tuple of str, not {suffix!r}")
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


def remove(filepath: PathLike, backend_args: dict | None = None) -> None:
    """Remove a file (``FileNotFoundError`` if there is none, ``IsADirectoryError`` for a
    folder: use :func:`rmtree`)."""
    path = local_path(filepath, backend_args, "remove")
    if not os.path.exists(path):
        raise FileNotFoundError(f"remove: {path!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"remove: {path!r} is a folder; rmtree removes folders")
    os.remove(path)


def rmtree(dir_path: PathLike, backend_args: dict | None = None) -> None:
    """Remove a folder and everything in it."""
    shutil.rmtree(local_path(dir_path, backend_args, "rmtree"))


def copyfile(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str | Path:
    """Copy the file ``src`` to ``dst`` (into it, under its own name, if ``dst`` is a folder)
    and return where it went; an existing file is replaced."""
    source = local_path(src, backend_args, "copyfile")
    return shutil.copy(source, local_path(dst, backend_args, "copyfile"))


def copytree(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str | Path:
    """Copy the folder ``src`` and everything in it to ``dst``, which must not exist yet
    (``FileExistsError``), and return ``dst``."""
    source = local_path(src, backend_args, "copytree")
    return shutil.copytree(source, local_path(dst, backend_args, "copytree"))


def backend_args_of(file_client_args: Mapping | None, backend_args: Mapping | None) -> Any:
    """``backend_args``, or MMEngine's older ``file_client_args`` (with its warning)."""
    if file_client_args is None:
        return backend_args
    warnings.warn(
        '"file_client_args" will be deprecated in future. Please use "backend_args" instead',
        DeprecationWarning,
        stacklevel=3,
    )
    if backend_args is not None:
        raise ValueError('"file_client_args" and "backend_args" cannot be set at the same time')
    return file_client_args


def _backend_named(backend_args: Mapping | None, action: str) -> str | None:
    """'local' or 'http' when ``backend_args`` names one of them, None when it names none."""
    if backend_args is None:
        return None
    if not isinstance(backend_args, Mapping):
        raise TypeError(
            f"{action}: backend_args must be a dict such as dict(backend='local') or None, "
            f"not {backend_args!r}"
        )
    options = dict(backend_args)
    name = options.pop("backend", None)
    if name is not None and name not in (*LOCAL_BACKENDS, "http"):
        raise ValueError(
            f"{action}: backend_args asks for the {name!r} storage backend, which runnerx.fileio "
            f"does not have: it has {LOCAL_BACKENDS[0]!r} (also named {LOCAL_BACKENDS[1]!r}) and "
            "'http' (reading URLs). Copy the files to a local disk and leave backend_args out."
        )
    if options:
        raise ValueError(
            f"{action}: backend_args has {sorted(options)}, which the local disk does not take; "
            "runnerx.fileio has no other storage backend"
        )
    if name is None:
        return None
    return "http" if name == "http" else "local"


def _uri_prefix(path: str) -> str:
    """'s3' for 's3://b/k' and 'cluster:s3://b/k', '' for a path without '://'."""
    if "://" not in path:
        return ""
    return path.split("://", 1)[0].rsplit(":", 1)[-1]
