"""PickleHandler: pickle files, read as plain data unless ``unsafe_load``."""

from __future__ import annotations

import pickle
from typing import IO, Any

from ..plain_pickle import load_plain_pickle
from .base import BaseFileHandler, name_of

__all__ = ["PickleHandler"]


class PickleHandler(BaseFileHandler):
    """Pickle: read as plain data unless ``unsafe_load``; written with protocol 2 (MMEngine's
    default) unless ``protocol=`` is given."""

    str_like = False

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """The pickled object; anything but plain data is refused (see
        :mod:`runnerx.fileio.plain_pickle`) unless ``unsafe_load``."""
        if unsafe_load:
            return pickle.load(file, **kwargs)
        return load_plain_pickle(file, name_of(file), **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """``pickle.dump`` to ``file``."""
        pickle.dump(obj, file, **{"protocol": 2, **kwargs})

    def dump_to_str(self, obj: Any, **kwargs: Any) -> bytes:
        """``pickle.dumps`` (bytes, as MMEngine's)."""
        return pickle.dumps(obj, **{"protocol": 2, **kwargs})
