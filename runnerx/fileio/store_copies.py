"""Copies of local files in a storage backend: what ``CheckpointHook`` and ``LoggerHook``
use when ``out_dir`` (with ``backend_args``) names a store such as ``s3://bucket/exp``."""

from __future__ import annotations

import os
from pathlib import Path

from .backends import BaseStorageBackend, LocalBackend
from .backends.registry_utils import get_file_backend

__all__ = ["has_method", "out_dir_backend", "require", "store_path", "upload"]


def out_dir_backend(
    out_dir: str | Path | None, backend_args: dict | None, key: str
) -> BaseStorageBackend:
    """The storage backend of a hook's ``out_dir`` (the one ``backend_args`` names, else the
    one of ``out_dir``'s prefix), refused unless it can take copies; errors name the config
    keys under ``key`` (e.g. ``'default_hooks.checkpoint'``).

    .. code-block:: python

        backend = out_dir_backend('s3://bucket/exp', None, 'default_hooks.checkpoint')
    """
    uri = "" if out_dir is None else os.fspath(out_dir)  # '': the work dir, a local path
    try:
        backend = get_file_backend(uri, backend_args=backend_args)
    except (TypeError, ValueError) as error:
        raise type(error)(
            f"{key}.out_dir={uri or None!r} with {key}.backend_args={backend_args!r}: {error}"
        ) from None
    if not isinstance(backend, LocalBackend) and not has_method(
        backend, "copyfile_from_local", "put"
    ):
        raise ValueError(
            f"{key}.out_dir={uri!r}: its storage backend {backend.name} cannot write files "
            "(it has neither copyfile_from_local nor put); give an out_dir in a store that "
            "can, or leave out_dir out to keep the files in the work dir"
        )
    return backend


def require(backend: BaseStorageBackend, methods: tuple[str, ...], key: str, why: str) -> None:
    """A ``ValueError`` naming ``key`` unless ``backend`` has all of ``methods``."""
    missing = [name for name in methods if not has_method(backend, name)]
    if missing:
        raise ValueError(
            f"{key}: {why} needs {' and '.join(missing)}, which the storage backend "
            f"{backend.name} of out_dir does not have"
        )


def store_path(backend: BaseStorageBackend, folder: str, *names: str) -> str:
    """``folder`` and ``names`` joined as ``backend`` joins paths (with '/' when it has no
    ``join_path``)."""
    if has_method(backend, "join_path"):
        return backend.join_path(folder, *names)
    return "/".join([folder.rstrip("/"), *names])


def upload(backend: BaseStorageBackend, local_path: str, target: str) -> None:
    """Copy the local file (or folder: a sharded checkpoint) ``local_path`` to ``target`` in
    ``backend``'s store, replacing what is there."""
    if isinstance(backend, LocalBackend):
        os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    if os.path.isdir(local_path):
        require(backend, ("copytree_from_local",), "out_dir", "copying a checkpoint folder")
        backend.copytree_from_local(local_path, target)
    elif has_method(backend, "copyfile_from_local"):
        backend.copyfile_from_local(local_path, target)
    else:
        with open(local_path, "rb") as file:
            backend.put(file.read(), target)


def has_method(backend: BaseStorageBackend, *methods: str) -> bool:
    """Whether ``backend`` has any of ``methods``."""
    return any(callable(getattr(backend, name, None)) for name in methods)
