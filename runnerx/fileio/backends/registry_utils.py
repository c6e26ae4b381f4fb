"""Which storage backend serves a path: ``backends`` (by name), ``prefix_to_backends`` (by a
URI's prefix, ``''`` for local paths), :func:`register_backend` to add one and
:func:`get_file_backend` to pick one (MMEngine's names and meanings)."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any

from runnerx.suggest import did_you_mean

from .base import BaseStorageBackend
from .http_backend import HTTPBackend
from .lmdb_backend import LmdbBackend
from .local_backend import LocalBackend

__all__ = ["backends", "get_file_backend", "prefix_to_backends", "register_backend"]

#: The backend class of each name that ``backend_args=dict(backend=name)`` may give.
backends: dict[str, type[BaseStorageBackend]] = {}
#: The backend class of each URI prefix (``'s3'`` for ``s3://b/k``; ``''``: no prefix).
prefix_to_backends: dict[str, type[BaseStorageBackend]] = {}

# MMEngine's backends for OpenMMLab's clusters, whose client libraries are not on PyPI.
_CLUSTER_BACKENDS = {"petrel": "petrel_client", "memcached": "mc (memcached)"}
_CLUSTER_PREFIXES = {"s3": "petrel", "petrel": "petrel"}
# FileClient's name of the local disk, which MMEngine's file_client_args users still give.
_LEGACY_NAMES = {"disk": LocalBackend}
_instances: dict[tuple, BaseStorageBackend] = {}


def register_backend(
    name: str,
    backend: type[BaseStorageBackend] | None = None,
    force: bool = False,
    prefixes: str | list[str] | tuple[str, ...] | None = None,
) -> Callable | None:
    """Make the :class:`BaseStorageBackend` subclass ``backend`` the storage backend called
    ``name`` (``backend_args=dict(backend=name, **options)`` builds it with ``options``) and
    the one of the URI ``prefixes`` (``'s3'`` serves ``s3://...``); ``force`` replaces an
    earlier registration. With ``backend=None`` it is a class decorator.

    .. code-block:: python

        register_backend('mys3', MyS3Backend, prefixes=['s3'])
        get('s3://bucket/a.png')                  # MyS3Backend().get('s3://bucket/a.png')
    """

    def decorate(cls: type[BaseStorageBackend]) -> type[BaseStorageBackend]:
        add_backend(backends, prefix_to_backends, name, cls, force, prefixes)
        return cls

    if backend is None:
        return decorate
    decorate(backend)
    return None


def add_backend(
    by_name: dict,
    by_prefix: dict,
    name: Any,
    backend: Any,
    force: bool,
    prefixes: Any,
    where: str = "register_backend",
    error: type[Exception] = ValueError,
) -> set:
    """Enter ``backend`` in ``by_name`` under ``name`` and in ``by_prefix`` under each of
    ``prefixes`` (nothing entered if one is taken and not ``force``: ``error``); returns the
    classes it replaced."""
    if not isinstance(name, str):
        raise TypeError(f"{where}: the name must be a str, not {name!r}")
    if not (inspect.isclass(backend) and issubclass(backend, BaseStorageBackend)):
        raise TypeError(
            f"{where}: {backend!r} is not a subclass of BaseStorageBackend "
            "(runnerx.fileio.BaseStorageBackend)"
        )
    listed = [prefixes] if isinstance(prefixes, str) else prefixes or []
    if not isinstance(listed, (list, tuple)) or not all(isinstance(p, str) for p in listed):
        raise TypeError(f"{where}: prefixes must be a str or a list of str, not {prefixes!r}")
    taken = [f"name {name!r}"] if name in by_name else []
    taken += [f"prefix {prefix!r}" for prefix in listed if prefix in by_prefix]
    if taken and not force:
        raise error(
            f"{where}: the storage backend {' and '.join(taken)} is already registered; "
            "pass force=True to replace it"
        )
    replaced = {by_name.get(name)} | {by_prefix.get(prefix) for prefix in listed}
    by_name[name] = backend
    by_prefix.update(dict.fromkeys(listed, backend))
    return replaced - {None}


def get_file_backend(
    uri: str | os.PathLike | None = None,
    *,
    backend_args: dict | None = None,
    enable_singleton: bool = False,
) -> BaseStorageBackend:
    """The storage backend for ``uri``: the one ``backend_args['backend']`` names, built with
    the other ``backend_args``; without that key, the one registered for ``uri``'s prefix
    (``LocalBackend`` for a path without ``://``, ``HTTPBackend`` for http(s) URLs). With
    ``enable_singleton`` the same arguments give the same object.

    .. code-block:: python

        backend = get_file_backend(data_root, enable_singleton=True)
        names = backend.list_dir_or_file(data_root, list_dir=False, suffix='.jpg')
        db = get_file_backend(backend_args=dict(backend='lmdb', db_path='data/train.lmdb'))
    """
    if uri is None and not (isinstance(backend_args, Mapping) and "backend" in backend_args):
        raise ValueError(
            "get_file_backend: give uri, or name the backend in backend_args "
            "(backend_args=dict(backend='local'))"
        )
    return backend_for(uri, backend_args, "get_file_backend", enable_singleton)


def backend_for(
    uri: str | os.PathLike | None,
    backend_args: Mapping | None,
    action: str,
    singleton: bool = True,
) -> BaseStorageBackend:
    """:func:`get_file_backend`'s choice, with errors that name ``action`` (the function the
    user called)."""
    if backend_args is not None and not isinstance(backend_args, Mapping):
        raise TypeError(
            f"{action}: backend_args must be a dict such as dict(backend='local') or None, "
            f"not {backend_args!r}"
        )
    options = dict(backend_args or {})
    name = options.pop("backend", None)
    prefix = "" if uri is None else uri_prefix(uri, action)
    if name is not None:
        cls = backends.get(name) or _LEGACY_NAMES.get(name)
        if cls is None:
            raise _unknown_name(name, action)
    else:
        cls = prefix_to_backends.get(prefix)
        if cls is None:
            raise _unknown_prefix(prefix, uri, action)
    key = (cls, repr(sorted(options.items())))
    if singleton and key in _instances:
        return _instances[key]
    _check_options(cls, options, action)
    backend = cls(**options)
    if singleton:
        _instances[key] = backend
    return backend


def uri_prefix(uri: str | os.PathLike, action: str) -> str:
    """'s3' for 's3://b/k' and 'cluster:s3://b/k'; '' for a path without '://'."""
    if not isinstance(uri, (str, os.PathLike)):
        raise TypeError(f"{action}: the path must be a str or a Path, not {uri!r}")
    path = os.fspath(uri)
    if "://" not in path:
        return ""
    return path.split("://", 1)[0].rsplit(":", 1)[-1]


def cluster_note(name: str) -> str:
    """Why runnerx lacks MMEngine's cluster backend ``name`` ('' for other names)."""
    if name not in _CLUSTER_BACKENDS:
        return ""
    return (
        f"MMEngine's {name!r} storage backend needs the {_CLUSTER_BACKENDS[name]} client "
        "library, which is not on PyPI, so runnerx has no such backend. "
    )


def _unknown_name(name: Any, action: str) -> ValueError:
    hint = did_you_mean(name, backends)
    return ValueError(
        f"{action}: backend_args asks for the {name!r} storage backend, which is not "
        f"registered (registered: {', '.join(map(repr, sorted(backends)))}){hint} "
        f"{cluster_note(name)}Copy the files to a local disk, or register a backend: "
        f"runnerx.fileio.register_backend({name!r}, MyBackend), MyBackend being a "
        "BaseStorageBackend subclass."
    )


def _unknown_prefix(prefix: str, uri: Any, action: str) -> ValueError:
    mmengine_name = _CLUSTER_PREFIXES.get(prefix)
    note = (
        f"MMEngine reads it with its {mmengine_name!r} storage backend. " if mmengine_name else ""
    )
    return ValueError(
        f"{action}: {os.fspath(uri)!r} has the prefix {prefix!r}, which no storage backend is "
        f"registered for (registered: {', '.join(map(repr, sorted(prefix_to_backends)))}). "
        f"{note}{cluster_note(mmengine_name or '')}Copy the files to a local disk and name them "
        "by their local paths, or register a backend for the prefix: "
        f"runnerx.fileio.register_backend('name', MyBackend, prefixes={prefix!r})."
    )


def _check_options(cls: type, options: dict, action: str) -> None:
    try:
        signature = inspect.signature(cls)
    except ValueError:  # a class whose signature cannot be read: let it check its arguments
        return
    try:
        signature.bind(**options)
    except TypeError as error:
        raise ValueError(
            f"{action}: backend_args {options!r} do not fit {cls.__name__}{signature}: {error}"
        ) from None


register_backend("local", LocalBackend, prefixes="")
register_backend("lmdb", LmdbBackend)
register_backend("http", HTTPBackend, prefixes=["http", "https"])
