"""MMEngine's local path helpers: ``mkdir_or_exist``, ``scandir``, ``check_file_exist``,
``symlink``, ``fopen``, ``is_filepath``, ``is_abs``, ``find_vcs_root``.

.. code-block:: python

    mkdir_or_exist('work_dirs/exp/vis')
    images = sorted(scandir('data/images', suffix=('.jpg', '.png'), recursive=True))
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from runnerx.fileio.paths import list_dir_or_file

__all__ = [
    "check_file_exist",
    "find_vcs_root",
    "fopen",
    "is_abs",
    "is_filepath",
    "mkdir_or_exist",
    "scandir",
    "symlink",
]


def is_filepath(x: Any) -> bool:
    """Whether ``x`` is a str or a :class:`pathlib.Path`."""
    return isinstance(x, (str, Path))


def fopen(filepath: str | Path, *args: Any, **kwargs: Any) -> IO:
    """``open(filepath, *args, **kwargs)`` for a str or a Path."""
    if not is_filepath(filepath):
        raise ValueError(f"fopen: filepath must be a str or a Path, got {filepath!r}")
    return open(filepath, *args, **kwargs)


def check_file_exist(filename: str | Path, msg_tmpl: str = 'file "{}" does not exist') -> None:
    """Raise FileNotFoundError (``msg_tmpl`` filled with the name) unless ``filename`` is a
    file."""
    if not os.path.isfile(filename):
        raise FileNotFoundError(msg_tmpl.format(filename))


def mkdir_or_exist(dir_name: str | Path, mode: int = 0o777) -> None:
    """Create the folder ``dir_name`` (``~`` expanded) and its parents unless it exists;
    ``''`` (the current folder) does nothing."""
    if dir_name == "":
        return
    os.makedirs(os.path.expanduser(dir_name), mode=mode, exist_ok=True)


def symlink(src: str | Path, dst: str | Path, overwrite: bool = True, **kwargs: Any) -> None:
    """Make ``dst`` a symbolic link to ``src``, replacing a file or link at ``dst`` when
    ``overwrite`` (keyword arguments go to :func:`os.symlink`)."""
    if overwrite and os.path.lexists(dst):
        os.remove(dst)
    os.symlink(src, dst, **kwargs)


def scandir(
    dir_path: str | Path,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    case_sensitive: bool = True,
) -> Iterator[str]:
    """The files under ``dir_path`` as paths relative to it, in no set order: those whose
    names end with ``suffix`` (a str or a tuple of them; ignoring case unless
    ``case_sensitive``), in sub-folders too when ``recursive``. Files whose names start with
    ``.`` are left out.

    This is :func:`runnerx.fileio.list_dir_or_file` with ``list_dir=False`` and the
    ``case_sensitive`` switch.
    """
    if not isinstance(dir_path, (str, Path)):
        raise TypeError(f"scandir: dir_path must be a str or a Path, got {dir_path!r}")
    if suffix is not None and not isinstance(suffix, (str, tuple)):
        raise TypeError(f"scandir: suffix must be a str or a tuple of str, got {suffix!r}")
    if case_sensitive or suffix is None:
        return list_dir_or_file(dir_path, list_dir=False, suffix=suffix, recursive=recursive)
    lowered = suffix.lower() if isinstance(suffix, str) else tuple(s.lower() for s in suffix)
    files = list_dir_or_file(dir_path, list_dir=False, recursive=recursive)
    return (path for path in files if path.lower().endswith(lowered))


def is_abs(path: str) -> bool:
    """Whether ``path`` is absolute: an absolute local path or an ``http://``, ``https://`` or
    ``s3://`` URL."""
    return os.path.isabs(path) or path.startswith(("http://", "https://", "s3://"))


def find_vcs_root(path: str | Path, markers: Sequence[str] = (".git",)) -> str | None:
    """The nearest folder, from ``path`` (a folder, or a file's folder) up to the root, that
    holds one of ``markers``; None when none does::

        repo = find_vcs_root(__file__)  # the checkout this file is in, or None
    """
    folder = os.path.abspath(os.path.expanduser(path))
    if os.path.isfile(folder):
        folder = os.path.dirname(folder)
    while True:
        if any(os.path.exists(os.path.join(folder, marker)) for marker in markers):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
