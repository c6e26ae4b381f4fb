"""BaseDataset: MMEngine's dataset base class (same arguments, annotation format and methods),
so a dataset written for MMEngine runs once its imports name runnerx."""

from __future__ import annotations

import copy
import functools
import numbers
import os
import reprlib
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
from torch.utils.data import Dataset

from runnerx.config import Config
from runnerx.data.annotation_file import ANNOTATION_FORMAT, load_annotations
from runnerx.data.serialized_list import (
    check_index,
    load_item,
    serialize_list,
    serialized_subset,
    subset_positions,
)
from runnerx.data.transforms import Compose
from runnerx.fileio import list_from_file

_Method = TypeVar("_Method", bound=Callable[..., Any])
_DEFAULT_DATA_PREFIX = MappingProxyType({"img_path": ""})  # MMEngine's dict(img_path='')
_ANNOTATION_ATTRIBUTES = ("data_list", "data_bytes", "data_address")


def force_full_init(method: _Method) -> _Method:
    """Make a dataset method call ``full_init()`` first while ``_fully_initialized`` is False
    (a dataset built with ``lazy_init=True``), as MMEngine's decorator of that name does."""

    @functools.wraps(method)
    def wrapper(dataset: Any, *args: Any, **kwargs: Any) -> Any:
        if not getattr(dataset, "_fully_initialized", False):
            if not hasattr(dataset, "full_init"):
                raise AttributeError(
                    f"{type(dataset).__name__}.{method.__name__} is decorated with "
                    "force_full_init, so the class needs a full_init method"
                )
            dataset.full_init()
            dataset._fully_initialized = True
        return method(dataset, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def init_on_first_read(dataset: Any) -> None:
    """``full_init()`` a dataset read before it was initialised (``lazy_init=True`` and no
    ``build_dataloader``), with a warning: each dataloader worker would load it again."""
    if not dataset._fully_initialized:
        warnings.warn(
            f"{type(dataset).__name__} is read before full_init() was called; call it before "
            "handing the dataset to a DataLoader (build_dataloader does), or every worker "
            "loads the annotations",
            stacklevel=3,
        )
        dataset.full_init()


class BaseDataset(Dataset):
    """A dataset of "data infos" (one dict per sample) read from an annotation file, each
    turned into a sample by ``pipeline``; MMEngine's BaseDataset, argument for argument.

    The annotation file (``.json``, ``.yaml``/``.yml`` or ``.pkl``) holds
    ``dict(metainfo=dict(...), data_list=[dict(img_path='a.jpg', ...), ...])``. A subclass
    overrides ``load_data_list`` for other files, ``parse_data_info`` for other entries,
    ``filter_data`` to drop entries (``filter_cfg`` is kept for it) and ``get_cat_ids`` for
    ``ClassBalancedDataset``::

        @DATASETS.register_module()
        class MyDataset(BaseDataset):
            METAINFO = dict(classes=('cat', 'dog'))

        train_dataloader = dict(dataset=dict(
            type='MyDataset', data_root='data/pets', ann_file='train.json',
            data_prefix=dict(img_path='images/'), pipeline=[dict(type='LoadImage'), ...]),
            ...)

    - ``metainfo``: ``METAINFO`` updated with this dict; a value naming an existing file is
      read as that file's lines (a class list). The annotation file's ``metainfo`` fills only
      keys still missing.
    - ``data_root`` is joined to a relative ``ann_file`` and relative ``data_prefix`` paths;
      ``data_prefix`` values are joined to the same keys of every entry.
    - ``indices``: keep the first ``n`` entries (an int), the last ``-n`` (a negative int) or
      those listed.
    - ``serialize_data`` keeps the data infos as one bytes buffer (``data_bytes``) and a
      numpy ``int64`` array of their ends (``data_address``; see
      :mod:`runnerx.data.serialized_list`), so forked dataloader workers share them instead of
      copying them.
    - ``lazy_init=True`` defers loading to ``full_init()`` (``build_dataloader`` calls it),
      or to the first method that needs the data.
    - ``full_init`` and ``get_subset(_)`` go through MMEngine's ``_serialize_data``,
      ``_get_unserialized_subset`` and ``_get_serialized_subset``, so a subclass that
      overrides ``full_init`` with them (mmdet's ``BaseDetDataset``) runs unchanged.
    - In training, a pipeline that returns ``None`` makes ``__getitem__`` try a random other
      index (numpy's global RNG, as MMEngine), up to ``max_refetch`` times; in ``test_mode``
      that is an error (``max_refetch=0``: no retry). An error while reading a sample keeps
      its type and message and gets a note (Python 3.11+) naming the index and the data
      info's paths.
    """

    METAINFO: dict = {}
    _fully_initialized: bool = False

    def __init__(
        self,
        ann_file: str | os.PathLike | None = "",
        metainfo: Mapping | Config | None = None,
        data_root: str | None = "",
        data_prefix: Mapping[str, str] = _DEFAULT_DATA_PREFIX,
        filter_cfg: dict | None = None,
        indices: int | Sequence[int] | None = None,
        serialize_data: bool = True,
        pipeline: Sequence[Mapping | Callable] = (),
        test_mode: bool = False,
        lazy_init: bool = False,
        max_refetch: int = 1000,
    ) -> None:
        if not isinstance(data_prefix, Mapping):
            raise TypeError(
                f"{type(self).__name__} data_prefix must be a dict of path prefixes such as "
                f"dict(img_path='images/'), but got {type(data_prefix).__name__}: {data_prefix!r}"
            )
        valid = isinstance(max_refetch, numbers.Integral) and not isinstance(max_refetch, bool)
        if not valid or max_refetch < 0:
            raise ValueError(
                f"{type(self).__name__} max_refetch must be an int >= 0 (how many random other "
                f"samples to try after the pipeline returns None), but got {max_refetch!r}"
            )
        self.ann_file = ann_file
        self._metainfo = self._load_metainfo(copy.deepcopy(metainfo))
        self.data_root = data_root
        self.data_prefix = dict(data_prefix)
        self.filter_cfg = copy.deepcopy(filter_cfg)
        self._indices = indices
        self.serialize_data = serialize_data
        self.test_mode = test_mode
        self.max_refetch = max_refetch
        _set_no_annotation(self)
        self._join_prefix()
        self.pipeline = Compose(pipeline)
        if not lazy_init:
            self.full_init()

    def full_init(self) -> None:
        """Load the data infos (``load_data_list``), filter them (``filter_data``), keep
        ``indices`` and serialize them; once only."""
        if self._fully_initialized:
            return
        self.data_list = self.load_data_list()
        loaded = len(self.data_list)
        self.data_list = self.filter_data()
        if self._indices is not None:
            try:
                self.data_list = self._get_unserialized_subset(self._indices)
            except IndexError:
                raise IndexError(self._indices_message(loaded)) from None
        if self.serialize_data:
            self.data_bytes, self.data_address = self._serialize_data()
        self._fully_initialized = True

    def _indices_message(self, loaded: int) -> str:
        """Why ``indices`` picks past the data infos that ``filter_data`` left."""
        left = len(self.data_list)
        bad = next(i for i in self._indices if not -left <= i < left)
        return (
            f"{type(self).__name__}: indices={reprlib.repr(self._indices)} picks index {bad}, "
            f"but filter_data left {left} of the {loaded} data infos loaded (indices count "
            "the data infos left)"
        )

    @property
    def metainfo(self) -> dict:
        """The dataset's meta information (classes, palette, ...): a copy."""
        return copy.deepcopy(self._metainfo)

    def load_data_list(self) -> list[dict]:
        """The data infos of ``ann_file`` (through ``parse_data_info``); its ``metainfo`` fills
        the keys that ``METAINFO`` and the ``metainfo`` argument left out."""
        name = type(self).__name__
        if not self.ann_file:
            raise ValueError(
                f"{name}: ann_file is empty; give an annotation file holding {ANNOTATION_FORMAT}"
                ", or override load_data_list to read the data some other way"
            )
        metainfo, raw_data_list = load_annotations(self.ann_file, name)
        for key, value in metainfo.items():
            self._metainfo.setdefault(key, value)
        data_list: list[dict] = []
        for position, raw_data_info in enumerate(raw_data_list):
            data_info = self.parse_data_info(raw_data_info)
            items = data_info if isinstance(data_info, list) else [data_info]
            if not all(isinstance(item, dict) for item in items):
                raise TypeError(
                    f"{name}.parse_data_info must return a dict or a list of dicts, but for "
                    f"data_list[{position}] of {self.ann_file} it returned {data_info!r}"
                )
            data_list.extend(items)
        return data_list

    def parse_data_info(self, raw_data_info: dict) -> dict | list[dict]:
        """One annotation-file entry as a data info (or a list of them, e.g. video frames):
        the base joins each ``data_prefix`` to the entry's value of the same key."""
        if not isinstance(raw_data_info, Mapping):
            raise TypeError(
                f"{type(self).__name__}: data_list entries must be dicts, but got "
                f"{type(raw_data_info).__name__}: {raw_data_info!r}"
            )
        for key, prefix in self.data_prefix.items():
            if key not in raw_data_info:
                raise ValueError(
                    f"{type(self).__name__}: data_prefix has the key {key!r}, which the entry "
                    f"{raw_data_info!r} of {self.ann_file} lacks; give every entry a {key!r}, "
                    "or set data_prefix to the keys the entries have (data_prefix=dict() for none)"
                )
            raw_data_info[key] = os.path.join(prefix, raw_data_info[key])
        return raw_data_info

    def filter_data(self) -> list[dict]:
        """The data infos to keep (all of ``self.data_list`` here; subclasses use
        ``self.filter_cfg``)."""
        return self.data_list

    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids in sample ``idx``; needed by ``ClassBalancedDataset``."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement get_cat_ids(idx) to be used in "
            "ClassBalancedDataset"
        )

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """A copy of data info ``idx`` (negative counts from the end), with ``'sample_idx'``
        set to its non-negative index."""
        position = check_index(idx, len(self))
        if self.serialize_data:
            data_info = load_item(self.data_bytes, self.data_address, position)
        else:
            data_info = copy.deepcopy(self.data_list[position])
        data_info["sample_idx"] = position
        return data_info

    def prepare_data(self, idx: int) -> Any:
        """Data info ``idx`` through the pipeline."""
        return self.pipeline(self.get_data_info(idx))

    def __getitem__(self, idx: int) -> Any:
        init_on_first_read(self)
        first = idx
        for _ in range(1 if self.test_mode else self.max_refetch + 1):
            try:
                data = self.prepare_data(idx)
            except Exception as err:
                _note_sample(err, self, idx)
                raise
            if data is not None:
                return data
            if self.test_mode:
                raise RuntimeError(
                    f"{type(self).__name__}: the pipeline returned None for index {idx} in "
                    "test_mode; a test pipeline must give every sample"
                )
            idx = self._rand_another()
        raise RuntimeError(
            f"{type(self).__name__}: the pipeline returned None for index {first} and then for "
            f"max_refetch={self.max_refetch} random others; check the data and the pipeline"
        )

    @force_full_init
    def __len__(self) -> int:
        return len(self.data_address) if self.serialize_data else len(self.data_list)

    @force_full_init
    def get_subset_(self, indices: int | Sequence[int]) -> None:
        """Keep only ``indices`` (the first ``n``, the last ``-n`` or the listed ones)."""
        if self.serialize_data:
            self.data_bytes, self.data_address = self._get_serialized_subset(indices)
        else:
            self.data_list = self._get_unserialized_subset(indices)

    @force_full_init
    def get_subset(self, indices: int | Sequence[int]) -> BaseDataset:
        """A new dataset of ``indices`` (as for ``get_subset_``); this one is unchanged."""
        subset = self._copy_without_annotation()
        if self.serialize_data:
            subset.data_bytes, subset.data_address = self._get_serialized_subset(indices)
        else:
            subset.data_list = copy.deepcopy(self._get_unserialized_subset(indices))
        return subset

    def _serialize_data(self) -> tuple[bytes, np.ndarray]:
        """``(data_bytes, data_address)`` of ``self.data_list``, which is emptied (MMEngine's
        method, called by ``full_init``)."""
        serialized = serialize_list(self.data_list)
        self.data_list = []
        return serialized

    def _get_unserialized_subset(self, indices: int | Sequence[int]) -> list[dict]:
        """The data infos of ``self.data_list`` that ``indices`` picks (not copies)."""
        return [self.data_list[i] for i in subset_positions(indices, len(self.data_list))]

    def _get_serialized_subset(self, indices: int | Sequence[int]) -> tuple[bytes, np.ndarray]:
        """``(data_bytes, data_address)`` of the serialized data infos that ``indices`` picks;
        the dataset's own are unchanged."""
        positions = subset_positions(indices, len(self.data_address))
        return serialized_subset(self.data_bytes, self.data_address, positions)

    def _copy_without_annotation(self, memo: dict[int, Any] | None = None) -> BaseDataset:
        """A deep copy of everything but the data infos (which it has none of), sharing
        ``memo`` with ``copy.deepcopy`` as MMEngine's method does."""
        other = type(self).__new__(type(self))
        memo = {} if memo is None else memo  # fresh each time (MMEngine shares one default)
        memo[id(self)] = other
        for key, value in self.__dict__.items():
            if key not in _ANNOTATION_ATTRIBUTES:
                object.__setattr__(other, key, copy.deepcopy(value, memo))
        _set_no_annotation(other)
        return other

    def _rand_another(self) -> int:
        """A random index, drawn from numpy's global RNG (as MMEngine draws it)."""
        return int(np.random.randint(0, len(self)))

    def _join_prefix(self) -> None:
        if self.ann_file and self.data_root and not _is_absolute(os.fspath(self.ann_file)):
            self.ann_file = os.path.join(self.data_root, self.ann_file)
        for key, prefix in self.data_prefix.items():
            if not isinstance(prefix, str):
                raise TypeError(
                    f"{type(self).__name__} data_prefix[{key!r}] must be a str path, but got "
                    f"{type(prefix).__name__}: {prefix!r}"
                )
            if self.data_root and not _is_absolute(prefix):
                self.data_prefix[key] = os.path.join(self.data_root, prefix)

    @classmethod
    def _load_metainfo(cls, metainfo: Mapping | Config | None = None) -> dict:
        """``METAINFO`` updated with ``metainfo``, whose values naming files are read as lists
        of lines."""
        merged = copy.deepcopy(cls.METAINFO)
        if metainfo is None:
            return merged
        if isinstance(metainfo, Config):
            metainfo = metainfo.to_dict()
        if not isinstance(metainfo, Mapping):
            raise TypeError(
                f"{cls.__name__} metainfo must be a dict such as dict(classes=('cat', 'dog')), "
                f"but got {type(metainfo).__name__}: {metainfo!r}"
            )
        for key, value in metainfo.items():
            merged[key] = list_from_file(value) if _is_file(value) else value
        return merged


def _note_sample(err: BaseException, dataset: Any, idx: int) -> None:
    """Add to ``err`` (Python 3.11+) which sample was being read, with the data info's path
    keys (``*_path``, ``file_name``) when it has them::

        while reading sample 5 of CocoDataset (img_path='data/coco/000005.jpg')
    """
    add_note = getattr(err, "add_note", None)
    if add_note is None:  # Python 3.10
        return
    try:
        info = dict(dataset.get_data_info(idx))
    except Exception:  # an index out of range, a broken annotation: say what is known
        info = {}
    paths = ", ".join(
        f"{key}={value!r}"
        for key, value in info.items()
        if isinstance(key, str) and (key.endswith("_path") or key == "file_name")
    )
    add_note(
        f"while reading sample {idx} of {type(dataset).__name__}" + (f" ({paths})" if paths else "")
    )


def _set_no_annotation(dataset: BaseDataset) -> None:
    """Give ``dataset`` no data infos, neither as a list nor serialized."""
    object.__setattr__(dataset, "data_list", [])
    object.__setattr__(dataset, "data_bytes", b"")
    object.__setattr__(dataset, "data_address", np.empty(0, dtype=np.int64))


def _is_absolute(path: str) -> bool:
    return os.path.isabs(path) or "://" in path


def _is_file(value: Any) -> bool:
    return isinstance(value, str) and os.path.isfile(value)
