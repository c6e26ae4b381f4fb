"""Reading annotation files: JSON, YAML or pickle, picked by the file's suffix, with
:func:`runnerx.fileio.load` (as MMEngine's BaseDataset reads them with ``fileio.load``), and
checking that they hold OpenMMLab's ``metainfo`` + ``data_list``. Pickles are read without
running code: only plain data (containers, numbers, strings, numpy arrays) is rebuilt."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from runnerx.fileio import UnsafePickleError, file_handlers, load
from runnerx.fileio.handlers.registry_utils import infer_format

#: What BaseDataset's annotation files hold (OpenMMLab 2.0's format).
ANNOTATION_FORMAT = "dict(metainfo=dict(...), data_list=[dict(...), ...])"


def load_annotation_file(path: str | os.PathLike) -> Any:
    """The object a ``.json``, ``.yaml``/``.yml`` or ``.pkl``/``.pickle`` file (or a format
    added with ``runnerx.fileio.register_handler``) holds.

    YAML is read safely (PyYAML needed); a pickle may hold dicts, lists, tuples, sets,
    numbers, strings, bytes and numpy arrays, and anything else is refused before it is
    built. Errors name the file.
    """
    path = os.fspath(path)
    if infer_format(path) not in file_handlers:
        raise TypeError(
            f"annotation file {path!r}: unsupported format; the suffix must be one of "
            f"{', '.join('.' + name for name in file_handlers)} (override load_data_list to "
            "read other files)"
        )
    try:
        return load(path)
    except FileNotFoundError:
        raise FileNotFoundError(f"annotation file {path!r} does not exist") from None
    except UnsafePickleError as error:
        raise UnsafePickleError(
            f"the annotation file {path}",
            error.name,
            if_trusted="read it in your dataset's load_data_list with "
            "runnerx.fileio.load(self.ann_file, unsafe_load=True)",
        ) from None


def load_annotations(path: str | os.PathLike, owner: str) -> tuple[Mapping, Sequence]:
    """``(metainfo, data_list)`` of an annotation file in :data:`ANNOTATION_FORMAT`; errors
    name ``owner`` (the dataset class), the file and what was expected (MMEngine's error
    types)."""
    annotations = load_annotation_file(path)
    where = f"{owner}: the annotation file {os.fspath(path)!r}"
    if not isinstance(annotations, dict):
        kind = type(annotations).__name__
        raise TypeError(f"{where} holds a {kind}; it must hold {ANNOTATION_FORMAT}")
    missing = [key for key in ("metainfo", "data_list") if key not in annotations]
    if missing:
        raise ValueError(
            f"{where} has no {' or '.join(map(repr, missing))} key; "
            f"it must hold {ANNOTATION_FORMAT}"
        )
    metainfo, data_list = annotations["metainfo"], annotations["data_list"]
    if not isinstance(metainfo, Mapping):
        raise TypeError(f"{where}: 'metainfo' must be a dict, not {type(metainfo).__name__}")
    if not isinstance(data_list, Sequence) or isinstance(data_list, (str, bytes)):
        raise TypeError(
            f"{where}: 'data_list' must be a list of dicts, not {type(data_list).__name__}"
        )
    return metainfo, data_list
