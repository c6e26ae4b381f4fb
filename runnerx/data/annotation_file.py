"""Reading annotation files: JSON, YAML or pickle, picked by the file's suffix as MMEngine's
``fileio.load`` does, and checking that they hold OpenMMLab's ``metainfo`` + ``data_list``.
Pickles are read without running code: only plain data (containers, numbers, strings, numpy
arrays) is rebuilt."""

from __future__ import annotations

import _codecs
import collections
import functools
import io
import json
import os
import pickle
from collections.abc import Mapping, Sequence
from typing import Any

#: What BaseDataset's annotation files hold (OpenMMLab 2.0's format).
ANNOTATION_FORMAT = "dict(metainfo=dict(...), data_list=[dict(...), ...])"

_FORMATS = {
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".pkl": "pickle",
    ".pickle": "pickle",
}


def load_annotation_file(path: str | os.PathLike) -> Any:
    """The object a ``.json``, ``.yaml``/``.yml`` or ``.pkl``/``.pickle`` file holds.

    YAML is read with ``yaml.safe_load`` (PyYAML needed); a pickle may hold dicts, lists,
    tuples, sets, numbers, strings, bytes and numpy arrays, and anything else is refused
    before it is built. Errors name the file.
    """
    path = os.fspath(path)
    kind = _FORMATS.get(os.path.splitext(path)[1].lower())
    if kind is None:
        raise TypeError(
            f"annotation file {path!r}: unsupported format; the suffix must be one of "
            f"{', '.join(_FORMATS)} (override load_data_list to read other files)"
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(f"annotation file {path!r} does not exist")
    if kind == "pickle":
        with open(path, "rb") as file:
            return _load_plain_pickle(file.read(), path)
    with open(path, encoding="utf-8") as file:
        text = file.read()
    if kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{error.lineno}: invalid JSON: {error.msg}") from None
    try:
        import yaml
    except ImportError:
        raise ImportError(f"reading {path} needs PyYAML: pip install pyyaml") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ValueError(f"{path}: invalid YAML: {error}") from None


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


def read_lines(path: str) -> list[str]:
    """The lines of a text file without their line ends (a class list, one name a line)."""
    with open(path, encoding="utf-8") as file:
        return [line.rstrip("\n\r") for line in file]


def _load_plain_pickle(data: bytes, path: str) -> Any:
    allowed = _plain_data_globals()

    class PlainDataUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            found = allowed.get(f"{module}.{name}")
            if found is None:
                raise pickle.UnpicklingError(
                    f"refused to load the annotation file {path}: it holds a pickled "
                    f"{module}.{name}, and only plain data (dicts, lists, numbers, strings, "
                    "numpy arrays) is rebuilt, since other pickled objects can run code. "
                    "Nothing in it was run. If you trust the file, read it in your dataset's "
                    "load_data_list."
                )
            return found

    return PlainDataUnpickler(io.BytesIO(data)).load()


@functools.cache
def _plain_data_globals() -> dict[str, Any]:
    """What a pickle of plain data refers to by name, keyed by that name."""
    # numpy's rebuilders are the ones checkpoints allow; imported here, where a pickle is read
    from runnerx.checkpoint.safe_load import numpy_safe_globals

    plain_types = (set, frozenset, complex, slice, range, bytearray, list, dict, tuple)
    allowed = {f"builtins.{kind.__name__}": kind for kind in plain_types}
    allowed.update(
        {
            "collections.OrderedDict": collections.OrderedDict,
            "collections.defaultdict": collections.defaultdict,
            "_codecs.encode": _codecs.encode,  # how protocol 2 (MMEngine's dump) writes bytes
        }
    )
    allowed.update({name: obj for obj, name in numpy_safe_globals()})
    try:  # numpy arrays pickled with protocol 5
        from numpy._core import numeric
    except ImportError:
        try:
            from numpy.core import numeric
        except ImportError:
            return allowed
    for package in ("numpy.core", "numpy._core"):
        allowed[f"{package}.numeric._frombuffer"] = numeric._frombuffer
    return allowed
