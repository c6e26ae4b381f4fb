"""Text files as lists and dicts (class-name lists, id maps): MMEngine's ``list_from_file``
and ``dict_from_file``."""

from __future__ import annotations

import io
from typing import Any

from .paths import PathLike, backend_args_of, get_text


def list_from_file(
    filename: PathLike,
    prefix: str = "",
    offset: int = 0,
    max_num: int = 0,
    encoding: str = "utf-8",
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
) -> list[str]:
    """The lines of a text file without their line ends, each after ``prefix``: skipping the
    first ``offset`` lines and keeping at most ``max_num`` (0 or less: all).

    .. code-block:: python

        classes = list_from_file('data/classes.txt')       # ['cat', 'dog', ...]
    """
    backend_args = backend_args_of(file_client_args, backend_args)
    lines = io.StringIO(get_text(filename, encoding, backend_args=backend_args))
    for _ in range(offset):
        lines.readline()
    items = []
    for line in lines:
        if 0 < max_num <= len(items):
            break
        items.append(prefix + line.rstrip("\n\r"))
    return items


def dict_from_file(
    filename: PathLike,
    key_type: type = str,
    encoding: str = "utf-8",
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
) -> dict[Any, Any]:
    """A dict from a text file whose lines are a key and one or more values, separated by
    whitespace: the key is converted with ``key_type``, one value stays a str and more become
    a list of str. A line without a value is an ``AssertionError`` (MMEngine's type) naming
    the file and line.

    .. code-block:: python

        # data/ids.txt holds "1 cat\\n2 dog big\\n"
        dict_from_file('data/ids.txt', key_type=int)       # {1: 'cat', 2: ['dog', 'big']}
    """
    backend_args = backend_args_of(file_client_args, backend_args)
    mapping: dict[Any, Any] = {}
    text = get_text(filename, encoding, backend_args=backend_args)
    for number, line in enumerate(io.StringIO(text), start=1):
        items = line.rstrip("\n").split()
        if len(items) < 2:
            raise AssertionError(
                f"{filename}:{number}: dict_from_file needs a key and at least one value "
                f"separated by whitespace, got {line.rstrip()!r}"
            )
        mapping[key_type(items[0])] = items[1:] if len(items) > 2 else items[1]
    return mapping
