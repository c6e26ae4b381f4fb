"""LmdbBackend: reading values from an LMDB database (MMEngine's
``mmengine.fileio.backends.lmdb_backend``); the ``lmdb`` package is imported when a backend is
made, not before."""

from __future__ import annotations

import os
from typing import Any

from .base import BaseStorageBackend

__all__ = ["LmdbBackend"]


class LmdbBackend(BaseStorageBackend):
    """Reads the values of an LMDB database by key (the "path" is the key), read-only; the
    database is opened on the first ``get`` with ``readonly``, ``lock``, ``readahead`` and
    ``kwargs`` passed to ``lmdb.open``. Needs ``pip install lmdb``.

    .. code-block:: python

        train_dataloader = dict(dataset=dict(
            backend_args=dict(backend='lmdb', db_path='data/train.lmdb'), ...))

    Unlike MMEngine's, whose ``get`` returns ``None`` for a missing key (which then fails
    later, far from the cause), ``get`` raises ``FileNotFoundError`` naming the key and
    database. Keys are encoded as UTF-8 (MMEngine: ASCII, the same bytes for ASCII keys).
    """

    def __init__(
        self,
        db_path: str | os.PathLike,
        readonly: bool = True,
        lock: bool = False,
        readahead: bool = False,
        **kwargs: Any,
    ) -> None:
        try:
            import lmdb  # noqa: F401  (fail here, where the backend is chosen)
        except ImportError as error:
            raise ImportError(
                'LmdbBackend needs the lmdb package: run "pip install lmdb"'
            ) from error
        self.db_path = str(db_path)
        self.readonly = readonly
        self.lock = lock
        self.readahead = readahead
        self.kwargs = kwargs
        self._client: Any = None

    def get(self, filepath: str | os.PathLike) -> bytes:
        """The value stored under the key ``filepath``."""
        if self._client is None:
            import lmdb

            self._client = lmdb.open(
                self.db_path,
                readonly=self.readonly,
                lock=self.lock,
                readahead=self.readahead,
                **self.kwargs,
            )
        key = str(filepath)
        with self._client.begin(write=False) as transaction:
            value = transaction.get(key.encode("utf-8"))
        if value is None:
            raise FileNotFoundError(f"LmdbBackend: no key {key!r} in {self.db_path!r}")
        return value

    def get_text(self, filepath: str | os.PathLike, encoding: str = "utf-8") -> str:
        """Not available (MMEngine's LmdbBackend has no text either): use ``get`` and decode."""
        raise NotImplementedError(
            f"LmdbBackend stores bytes: get({str(filepath)!r}).decode(...) gives the text"
        )

    def __getstate__(self) -> dict:
        # An open LMDB environment cannot be pickled (dataloader workers started with
        # spawn): each copy opens its own on first use.
        return {**self.__dict__, "_client": None}

    def __del__(self) -> None:
        if getattr(self, "_client", None) is not None:
            self._client.close()
