"""``load`` and ``dump``: MMEngine's one call for JSON, YAML and pickle files, safe by default.

.. code-block:: python

    dump(dict(a=1), 'work_dirs/x/meta.json')     # format from the suffix; written atomically
    meta = load('work_dirs/x/meta.json')
    text = dump([1, 2], file_format='yaml')       # file=None: returns the text (bytes for pickle)
"""

from __future__ import annotations

import io
import os
from typing import Any

from .backends.local_backend import LocalBackend
from .backends.registry_utils import backend_for
from .handlers.base import name_of
from .handlers.registry_utils import handler_for, infer_format
from .paths import backend_args_of, method_of


def load(
    file: Any,
    file_format: str | None = None,
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
    *,
    unsafe_load: bool = False,
    **kwargs: Any,
) -> Any:
    """The object a JSON, YAML or pickle file holds: an open file, or a path read through its
    storage backend (a local path, an http(s) URL, a path of a registered backend).

    The format is ``file_format`` or the path's suffix (``.json``, ``.yaml``/``.yml``,
    ``.pkl``/``.pickle``, or one added with :func:`register_handler`); ``kwargs`` go to the
    handler's ``load_from_fileobj``. Safe by default: a pickle rebuilds only plain data
    (:class:`UnsafePickleError` otherwise) and YAML builds no Python objects; pass
    ``unsafe_load=True`` for a trusted file that holds other objects (MMEngine's behaviour).
    """
    backend_args = backend_args_of(file_client_args, backend_args)
    if unsafe_load:  # only then, so that handlers without the option still work
        kwargs["unsafe_load"] = True
    if isinstance(file, (str, os.PathLike)):
        backend = backend_for(file, backend_args, "load")
        path = os.fspath(file)
        handler = handler_for(file_format or infer_format(path), path)
        if type(backend) is LocalBackend:  # read as the file it is (no copy in memory)
            return handler.load_from_path(path, **kwargs)
        if handler.str_like:
            buffer: io.IOBase = io.StringIO(backend.get_text(path))
        else:
            buffer = io.BytesIO(backend.get(path))
        buffer.name = path  # errors name the URL
        return handler.load_from_fileobj(buffer, **kwargs)
    if hasattr(file, "read"):
        handler = _handler_of_file_object(file, file_format, "load")
        return handler.load_from_fileobj(file, **kwargs)
    raise TypeError(f"load: file must be a path or an open file, not {file!r}")


def dump(
    obj: Any,
    file: Any = None,
    file_format: str | None = None,
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
    **kwargs: Any,
) -> str | bytes | None:
    """Write ``obj`` as JSON, YAML or pickle to a path (a local one atomically: a failure
    leaves the old file as it was; another through its backend's ``put_text``/``put``), to an
    open file, or, with ``file=None``, return it as a str (bytes for pickle; ``file_format``
    is then required).

    The format is ``file_format`` or the path's suffix; ``kwargs`` go to the handler (e.g.
    ``indent=2`` for ``json.dump``). Returns ``None`` when it wrote a file.
    """
    backend_args = backend_args_of(file_client_args, backend_args)
    if file is None:
        if file_format is None:
            raise ValueError(
                "dump: file_format must be given when file is None (the format of the "
                "returned text: 'json', 'yaml' or 'pickle')"
            )
        return handler_for(file_format, "dump").dump_to_str(obj, **kwargs)
    if isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        handler = handler_for(file_format or infer_format(path), path)
        backend = backend_for(path, backend_args, "dump")
        if type(backend) is LocalBackend:  # atomic, streamed to the file
            handler.dump_to_path(obj, path, **kwargs)
            return None
        writer = method_of(backend, path, "dump", "put_text" if handler.str_like else "put")
        buffer = io.StringIO() if handler.str_like else io.BytesIO()
        handler.dump_to_fileobj(obj, buffer, **kwargs)
        writer(buffer.getvalue(), path)
        return None
    if hasattr(file, "write"):
        _handler_of_file_object(file, file_format, "dump").dump_to_fileobj(obj, file, **kwargs)
        return None
    raise TypeError(f"dump: file must be a path, an open file or None, not {file!r}")


def _handler_of_file_object(file: Any, file_format: str | None, action: str) -> Any:
    if file_format is None:
        raise TypeError(
            f"{action}: {name_of(file)} is an open file, so give its format: "
            "file_format='json', 'yaml' or 'pickle'"
        )
    return handler_for(file_format, name_of(file))
