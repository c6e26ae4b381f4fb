"""MMEngine's file functions (``get``, ``put``, ``exists``, ``list_dir_or_file``, ...): each
picks the storage backend of its path with :func:`get_file_backend` and calls the backend's
method of the same name.

``backend_args`` is MMEngine's: ``None`` (the backend follows from the path's prefix: local
paths go to :class:`LocalBackend`, whose writes are atomic, http(s) URLs to
:class:`HTTPBackend`, a prefix a user registered to that backend) or a dict naming a
registered backend and its options (``dict(backend='lmdb', db_path='data/train.lmdb')``).
A backend that lacks the method (writing to a URL) is a ``NotImplementedError`` that says
what it has.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .backends.local_backend import LocalBackend
from .backends.registry_utils import backend_for

PathLike = str | os.PathLike


def _backend_method(
    filepath: PathLike, backend_args: Mapping | None, action: str, method: str | None = None
) -> Callable:
    """The method ``method`` (default: ``action``) of ``filepath``'s backend; errors name
    ``action``, the function the user called."""
    return method_of(backend_for(filepath, backend_args, action), filepath, action, method)


def method_of(backend: Any, filepath: PathLike, action: str, method: str | None) -> Callable:
    """``backend``'s method ``method`` (default: ``action``), or a ``NotImplementedError``
    that names ``action``, ``filepath`` and the methods the backend has."""
    found = getattr(backend, method or action, None)
    if found is None:
        has = [name for name in dir(backend) if _is_method(backend, name)]
        raise NotImplementedError(
            f"{action}: {os.fspath(filepath)!r} is served by the {backend.name} storage "
            f"backend, which has no {method or action} (it has {', '.join(has)})"
        )
    return found


def _is_method(backend: Any, name: str) -> bool:
    return not name.startswith("_") and callable(getattr(type(backend), name, None))


def local_path(filepath: PathLike, backend_args: Mapping | None, action: str) -> str:
    """``filepath`` as a str, once it is known to go to the local disk: for what writes local
    files only (``save_checkpoint``); another backend is a ``ValueError`` naming it."""
    backend = backend_for(filepath, backend_args, action)
    if not isinstance(backend, LocalBackend):
        raise ValueError(
            f"{action}: {os.fspath(filepath)!r} is served by the {backend.name} storage "
            f"backend; {action} writes local files only"
        )
    return os.fspath(filepath)


def get(filepath: PathLike, backend_args: dict | None = None) -> bytes:
    """The bytes of a file (of an http(s) URL's body, of an LMDB key, ...)."""
    return _backend_method(filepath, backend_args, "get")(filepath)


def get_text(filepath: PathLike, encoding: str = "utf-8", backend_args: dict | None = None) -> str:
    """The text of a file (or of an http(s) URL's body), decoded with ``encoding``."""
    return _backend_method(filepath, backend_args, "get_text")(filepath, encoding)


def put(obj: bytes, filepath: PathLike, backend_args: dict | None = None) -> None:
    """Write ``obj`` to ``filepath`` (a local file atomically, creating its folder)."""
    _backend_method(filepath, backend_args, "put")(obj, filepath)


def put_text(obj: str, filepath: PathLike, backend_args: dict | None = None) -> None:
    """Write the text ``obj`` to ``filepath`` (a local file in UTF-8, atomically, creating its
    folder)."""
    _backend_method(filepath, backend_args, "put_text")(obj, filepath)


def exists(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` exists (a file or a folder)."""
    return _backend_method(filepath, backend_args, "exists")(filepath)


def isfile(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` is a file."""
    return _backend_method(filepath, backend_args, "isfile")(filepath)


def isdir(filepath: PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``filepath`` is a folder."""
    return _backend_method(filepath, backend_args, "isdir")(filepath)


def join_path(filepath: PathLike, *filepaths: PathLike, backend_args: dict | None = None) -> str:
    """``filepath`` and ``filepaths`` joined into one path, as the backend joins them
    (``os.path.join`` for local paths)."""
    return _backend_method(filepath, backend_args, "join_path")(filepath, *filepaths)


@contextlib.contextmanager
def get_local_path(filepath: PathLike, backend_args: dict | None = None) -> Iterator[str]:
    """A local path holding ``filepath``'s content, for the ``with`` block: a local path is
    given as it is (and kept); a URL is downloaded to a temporary file (with the URL's
    suffix), removed when the block ends.

    .. code-block:: python

        with get_local_path('https://host/ann.json') as path:
            annotations = json.load(open(path))
    """
    method = _backend_method(filepath, backend_args, "get_local_path")
    with method(os.fspath(filepath)) as path:
        yield path


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
    method = _backend_method(dir_path, backend_args, "list_dir_or_file")
    return method(dir_path, list_dir, list_file, suffix, recursive)


def remove(filepath: PathLike, backend_args: dict | None = None) -> None:
    """Remove a file (``FileNotFoundError`` if there is none, ``IsADirectoryError`` for a
    folder: use :func:`rmtree`)."""
    _backend_method(filepath, backend_args, "remove")(filepath)


def rmtree(dir_path: PathLike, backend_args: dict | None = None) -> None:
    """Remove a folder and everything in it."""
    _backend_method(dir_path, backend_args, "rmtree")(dir_path)


def copyfile(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the file ``src`` to ``dst`` in the same store (into it, under its own name, if
    ``dst`` is a folder) and return where it went; an existing file is replaced."""
    return _within_one_backend(src, dst, backend_args, "copyfile")(src, dst)


def copytree(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the folder ``src`` and everything in it to ``dst`` in the same store; ``dst``
    must not exist yet (``FileExistsError``). Returns ``dst``."""
    return _within_one_backend(src, dst, backend_args, "copytree")(src, dst)


def copyfile_from_local(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the local file ``src`` to ``dst`` in ``dst``'s store; returns where it went."""
    return _backend_method(dst, backend_args, "copyfile_from_local")(src, dst)


def copytree_from_local(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the local folder ``src`` to ``dst`` in ``dst``'s store; returns ``dst``."""
    return _backend_method(dst, backend_args, "copytree_from_local")(src, dst)


def copyfile_to_local(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the file ``src`` of its store to the local path ``dst``; returns where it went.

    The backend is ``src``'s: MMEngine takes ``dst``'s, which is the local disk whatever
    ``src`` is, so that its ``copyfile_to_local('s3://b/k', 'x')`` does not reach S3 (a bug).
    """
    return _backend_method(src, backend_args, "copyfile_to_local")(src, dst)


def copytree_to_local(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> str:
    """Copy the folder ``src`` of its store to the local path ``dst``; returns ``dst``. The
    backend is ``src``'s (see :func:`copyfile_to_local`)."""
    return _backend_method(src, backend_args, "copytree_to_local")(src, dst)


def copy_if_symlink_fails(src: PathLike, dst: PathLike, backend_args: dict | None = None) -> bool:
    """Make ``dst`` a symlink to ``src``, or, where the store cannot, a copy of it; True if
    it made a symlink."""
    return _within_one_backend(src, dst, backend_args, "copy_if_symlink_fails")(src, dst)


def generate_presigned_url(
    url: str,
    client_method: str = "get_object",
    expires_in: int = 3600,
    backend_args: dict | None = None,
) -> str:
    """A presigned URL for ``url`` from a backend that makes them (an object store's; the
    local disk and HTTP have none)."""
    method = _backend_method(url, backend_args, "generate_presigned_url")
    return method(url, client_method, expires_in)


def backend_args_of(file_client_args: Mapping | None, backend_args: Mapping | None) -> Any:
    """``backend_args``, or MMEngine's older ``file_client_args`` (with its warning, logged
    once per process)."""
    if file_client_args is None:
        return backend_args
    _warn_of_file_client_args()
    if backend_args is not None:
        raise ValueError('"file_client_args" and "backend_args" cannot be set at the same time')
    return file_client_args


@functools.cache
def _warn_of_file_client_args() -> None:
    # a logged WARNING, as MMEngine's hooks give: Python's filters hide a DeprecationWarning
    from runnerx.logging.logger import print_log  # the logging package imports torch

    print_log(
        '"file_client_args" will be deprecated in future. Please use "backend_args" instead',
        logger="current",
        level=logging.WARNING,
    )


def _within_one_backend(
    src: PathLike, dst: PathLike, backend_args: Mapping | None, action: str
) -> Callable:
    # MMEngine takes src's backend and hands it dst as it is, so copying a local file to
    # 's3://b/k' wrote a local folder 's3:'; here a dst of another store is refused.
    backend = backend_for(src, backend_args, action)
    target = backend_for(dst, backend_args, action)
    if type(target) is not type(backend):
        raise ValueError(
            f"{action}: {os.fspath(src)!r} and {os.fspath(dst)!r} are in different stores "
            f"({backend.name} and {target.name}); copyfile_from_local / copyfile_to_local "
            "(and the copytree ones) copy between a store and the local disk"
        )
    return method_of(backend, src, action, None)
