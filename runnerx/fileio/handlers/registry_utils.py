"""The handler of each format: ``file_handlers``, ``register_handler`` to add one, and how
``load``/``dump`` pick one (``infer_format``, ``handler_for``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .base import BaseFileHandler
from .json_handler import JsonHandler
from .pickle_handler import PickleHandler
from .yaml_handler import YamlHandler

__all__ = ["file_handlers", "register_handler"]


#: The handler of each format name (a file's suffix, or ``file_format``).
file_handlers: dict[str, BaseFileHandler] = {
    "json": JsonHandler(),
    "yaml": YamlHandler(),
    "yml": YamlHandler(),
    "pickle": PickleHandler(),
    "pkl": PickleHandler(),
}


def register_handler(file_formats: str | list[str], **kwargs: Any) -> Callable[[type], type]:
    """A class decorator that makes ``load`` and ``dump`` use an instance of the class (built
    with ``kwargs``) for the formats ``file_formats`` (names without the dot)."""
    formats = [file_formats] if isinstance(file_formats, str) else file_formats
    if not isinstance(formats, list) or not all(isinstance(name, str) for name in formats):
        raise TypeError(f"file_formats must be a str or a list of str, not {file_formats!r}")

    def register(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, BaseFileHandler)):
            raise TypeError(f"register_handler: {cls!r} is not a subclass of BaseFileHandler")
        handler = cls(**kwargs)
        for name in formats:
            file_handlers[name] = handler
        return cls

    return register


def infer_format(path: str) -> str:
    """The format a path's suffix names, lower-cased (``'json'`` for ``'a/b.JSON'``), or
    ``''`` if its name has no dot."""
    name = os.path.basename(path)
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


def handler_for(file_format: str, where: str) -> BaseFileHandler:
    """The handler of ``file_format``; a ``TypeError`` naming ``where`` and the known formats
    if there is none."""
    handler = file_handlers.get(file_format)
    if handler is None:
        raise TypeError(
            f"{where}: unsupported format {file_format!r}; the formats known are "
            f"{', '.join(file_handlers)} (give file_format=..., or add a format with "
            "runnerx.fileio.register_handler)"
        )
    return handler
