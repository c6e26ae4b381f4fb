"""JsonHandler: JSON files, which also hold sets, ranges and numpy values (as lists and
numbers)."""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from .base import BaseFileHandler, name_of

__all__ = ["JsonHandler", "set_default"]


class JsonHandler(BaseFileHandler):
    """JSON; dumps sets, ranges and numpy arrays and scalars as lists and numbers."""

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """``json.load`` (always safe: ``unsafe_load`` changes nothing); a ``ValueError`` names
        the file and line of a syntax error."""
        try:
            return json.load(file, **kwargs)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name_of(file)}:{error.lineno}: invalid JSON: {error.msg}") from None

    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """``json.dump`` with :func:`json_default` for what JSON lacks."""
        json.dump(obj, file, **{"default": json_default, **kwargs})

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        """``json.dumps`` with :func:`json_default` for what JSON lacks."""
        return json.dumps(obj, **{"default": json_default, **kwargs})


def json_default(obj: Any) -> Any:
    """A set or range as a list, a numpy array as a (nested) list, a numpy scalar as a number."""
    if isinstance(obj, (set, range)):
        return list(obj)
    numpy = sys.modules.get("numpy")  # a numpy value exists only once numpy is imported
    if numpy is not None and isinstance(obj, (numpy.ndarray, numpy.generic)):
        return obj.tolist()
    raise TypeError(
        f"{type(obj).__qualname__} cannot be written as JSON (JSON holds dicts, lists, "
        "strings, numbers, booleans and None; sets, ranges and numpy values are converted): "
        "convert it first, or dump as pickle"
    )


#: MMEngine's name for :func:`json_default` (``mmengine.fileio.handlers.json_handler.set_default``)
set_default = json_default
