"""A storage backend for tests: an object store stand-in whose key ``store://<rel>`` is the
file ``<$STORE_ROOT>/<rel>`` (an environment variable, so that spawned ranks find it too)."""

from __future__ import annotations

import os

from runnerx.fileio import BaseStorageBackend

PREFIX = "store://"


class DirStoreBackend(BaseStorageBackend):
    """An object store stand-in: ``store://<rel>`` is the file ``$STORE_ROOT/<rel>``. It has
    what object stores' backends have (no folders, no get_local_path)."""

    writes = 0  # this process's puts

    def _file(self, filepath) -> str:
        filepath = str(filepath)
        assert filepath.startswith(PREFIX), filepath
        return os.path.join(os.environ["STORE_ROOT"], filepath[len(PREFIX) :])

    def get(self, filepath) -> bytes:
        with open(self._file(filepath), "rb") as file:
            return file.read()

    def get_text(self, filepath, encoding="utf-8") -> str:
        return self.get(filepath).decode(encoding)

    def put(self, obj: bytes, filepath) -> None:
        type(self).writes += 1
        path = self._file(filepath)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as file:
            file.write(obj)

    def exists(self, filepath) -> bool:
        return os.path.exists(self._file(filepath))

    def isfile(self, filepath) -> bool:
        return os.path.isfile(self._file(filepath))

    def remove(self, filepath) -> None:
        os.remove(self._file(filepath))

    def join_path(self, filepath, *filepaths) -> str:
        return "/".join([str(filepath).rstrip("/"), *filepaths])

    def copyfile_from_local(self, src, dst) -> str:
        with open(src, "rb") as file:
            self.put(file.read(), dst)
        return dst
