"""CheckpointLoader: reads a checkpoint from wherever its name points (MMEngine's class).

A local path is read safely (``weights_only=True``); an ``http://`` or ``https://`` URL is
downloaded once into torch's hub cache (``<torch.hub.get_dir()>/checkpoints``) and read from
there the same way; a name whose prefix a registered storage backend serves
(``runnerx.fileio.register_backend('s3', MyS3Backend, prefixes='s3')``) is read through that
backend, then loaded the same way. ``load_from``, ``init_cfg=dict(type='Pretrained',
checkpoint=...)`` and :func:`runnerx.runner.load_checkpoint` all read through it, so this
works in a config::

    load_from = 'https://download.openmmlab.com/mmclassification/v0/resnet/resnet18_8xb32_in1k_20210831-fbbb1da6.pth'

Other places get a reader of their own (which goes before a storage backend's)::

    @CheckpointLoader.register_scheme(prefixes='mydisk://')
    def load_from_mydisk(filename, map_location):
        return runnerx.checkpoint.load_checkpoint(filename.replace('mydisk://', '/mnt/disk/'))
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from runnerx.dist import all_reduce, get_local_rank, get_world_size
from runnerx.fileio import get_file_backend
from runnerx.fileio.backends import prefix_to_backends
from runnerx.fileio.backends.registry_utils import uri_prefix

from .io import load_checkpoint as load_local_checkpoint
from .io import read_checkpoint
from .model_zoo import load_from_mmcls, load_from_openmmlab, load_from_torchvision
from .url_errors import download_errors

Reader = Callable[[str, Any], Any]


class CheckpointLoader:
    """Chooses a checkpoint reader by the name's prefix (the longest registered one that
    matches; else the storage backend registered for its URI prefix; a name with none is a
    local path) and calls it with ``map_location``."""

    _schemes: ClassVar[dict[str, Reader]] = {}

    @classmethod
    def register_scheme(
        cls,
        prefixes: str | list[str] | tuple[str, ...],
        loader: Reader | None = None,
        force: bool = False,
    ) -> Any:
        """Register ``loader(filename, map_location)`` for names starting with ``prefixes``;
        without ``loader``, a decorator. A prefix registered already needs ``force=True``."""
        if loader is None:
            return lambda function: cls.register_scheme(prefixes, function, force) or function
        for prefix in [prefixes] if isinstance(prefixes, str) else prefixes:
            if not isinstance(prefix, str) or not prefix:
                raise TypeError(f"CheckpointLoader prefixes must be non-empty strs, got {prefix!r}")
            if prefix in cls._schemes and not force:
                raise KeyError(
                    f"CheckpointLoader: {prefix!r} has a reader already "
                    f"({cls._schemes[prefix].__name__}); pass force=True to replace it"
                )
            cls._schemes[prefix] = loader
        return None

    @classmethod
    def _get_checkpoint_loader(cls, path: str) -> Reader:
        """The reader for ``path``: its longest registered prefix's, else the local one."""
        for prefix in sorted(cls._schemes, key=len, reverse=True):
            if path.startswith(prefix):
                return cls._schemes[prefix]
        if "://" in path:
            prefix = uri_prefix(path, "CheckpointLoader")
            if prefix in prefix_to_backends:
                return load_from_backend
            raise ValueError(
                f"no checkpoint reader for {prefix}:// ({path}): runnerx reads local paths and "
                "http(s) URLs, and the prefixes of registered storage backends "
                f"({', '.join(repr(p) for p in sorted(prefix_to_backends) if p)}); download "
                "the file and give its path, register a storage backend for the prefix "
                f"(runnerx.fileio.register_backend('name', MyBackend, prefixes={prefix!r})), "
                "or register a reader (CheckpointLoader.register_scheme(prefixes="
                f"'{prefix}://', loader=read), read(filename, map_location) returning the dict)"
            )
        return load_from_local

    @classmethod
    def load_checkpoint(
        cls,
        filename: str | os.PathLike,
        map_location: Any = None,
        logger: Any = "current",
        *,
        unsafe_load: bool = False,
    ) -> Any:
        """Read the checkpoint ``filename`` names (a path, a URL, a registered prefix).
        ``logger`` is accepted for MMEngine's callers; messages go to the run's log.
        ``unsafe_load=True`` (a run's ``unsafe_load``) lets runnerx's own readers unpickle
        everything, for files you trust; a registered reader loads as it loads."""
        filename = os.fspath(filename)
        reader = cls._get_checkpoint_loader(filename)
        if unsafe_load and reader in _OWN_READERS:
            return reader(filename, map_location, unsafe_load=True)
        return reader(filename, map_location)


def load_from_local(filename: str, map_location: Any = None, unsafe_load: bool = False) -> Any:
    """A local file, read safely (see :func:`runnerx.checkpoint.load_checkpoint`)."""
    return load_local_checkpoint(
        os.path.expanduser(filename), map_location=map_location, unsafe_load=unsafe_load
    )


def load_from_backend(filename: str, map_location: Any = None, unsafe_load: bool = False) -> Any:
    """A name whose URI prefix a registered storage backend serves: through the backend's
    ``get_local_path`` when it has one, else its ``get`` into memory; read safely either way."""
    backend = get_file_backend(filename, enable_singleton=True)
    local_path = getattr(backend, "get_local_path", None)
    if callable(local_path):
        with local_path(filename) as path:
            return load_from_local(os.fspath(path), map_location, unsafe_load)
    buffer = _NamedBuffer(backend.get(filename), filename)
    return read_checkpoint(buffer, filename, map_location, unsafe_load)


class _NamedBuffer(io.BytesIO):
    """The bytes of a checkpoint, named in errors by where they came from."""

    def __init__(self, data: bytes, name: str) -> None:
        super().__init__(data)
        self.name = name

    def __str__(self) -> str:
        return self.name


def load_from_http(
    filename: str, map_location: Any = None, model_dir: str | None = None, unsafe_load: bool = False
) -> Any:
    """An http(s) URL: downloaded once into ``model_dir`` (torch's hub cache by default, see
    :func:`runnerx.utils.dl_utils.load_url`), by the first process of each machine while the
    others wait, then read safely. A failed download raises a
    :class:`~runnerx.checkpoint.url_errors.CheckpointDownloadError` naming the URL."""
    from runnerx.utils.dl_utils import load_url

    local_rank = get_local_rank()
    with download_errors(filename):
        failure: Exception | None = None
        if local_rank == 0:
            try:
                checkpoint = load_url(
                    filename, model_dir, map_location, progress=False, unsafe_load=unsafe_load
                )
            except Exception as error:  # the other ranks must learn of it, not wait
                failure = error
        failed_elsewhere = get_world_size() > 1 and _failed_on_any_rank(failure is not None)
        if failed_elsewhere and failure is None:
            raise RuntimeError(
                f"downloading {filename} failed on another rank (the first process of "
                "a machine downloads for the others): see that rank's error"
            )
        if failure is not None:
            raise failure
        if local_rank > 0:
            checkpoint = load_url(
                filename, model_dir, map_location, progress=False, unsafe_load=unsafe_load
            )
    return checkpoint


def _failed_on_any_rank(failed: bool) -> bool:
    """Whether any rank's download failed: every rank waits here, as at a barrier, and learns
    the same answer."""
    flag = torch.tensor([int(failed)])
    return bool(all_reduce(flag, op="max").item())


CheckpointLoader.register_scheme(("http://", "https://"), load_from_http)
CheckpointLoader.register_scheme(("torchvision://", "modelzoo://"), load_from_torchvision)
CheckpointLoader.register_scheme(("open-mmlab://", "openmmlab://"), load_from_openmmlab)
CheckpointLoader.register_scheme("mmcls://", load_from_mmcls)
#: the readers that take ``unsafe_load`` (a user's registered reader loads as it loads)
_OWN_READERS = (
    load_from_local,
    load_from_backend,
    load_from_http,
    load_from_torchvision,
    load_from_openmmlab,
    load_from_mmcls,
)
