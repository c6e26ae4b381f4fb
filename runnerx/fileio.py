"""Writing files so that a crash cannot tear them (shared by config dumps and checkpoints)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import IO


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, binary: bool = False) -> Iterator[IO]:
    """Open a temporary file beside ``path``; on success flush, fsync and rename it over
    ``path``. Readers (and a crash at any moment) see the old file or the complete new one.

    .. code-block:: python

        with atomic_write('work_dirs/x/config.py') as file:
            file.write(text)
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.")
    try:
        with os.fdopen(
            handle, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})
        ) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
