"""MMEngine's dataset wrappers: ConcatDataset, RepeatDataset and ClassBalancedDataset.

Each takes datasets as objects or as config dicts (built with ``DATASETS``), supports
``lazy_init`` (``build_dataloader`` calls ``full_init()``, which initialises the wrapped
datasets too) and refuses ``get_subset``: take subsets of the wrapped datasets instead.
"""

from __future__ import annotations

import bisect
import copy
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from torch.utils.data import ConcatDataset as _TorchConcatDataset

from runnerx.data.base_dataset import force_full_init, init_on_first_read
from runnerx.data.serialized_list import check_index
from runnerx.registry import DATASETS


class _DatasetWrapper:
    """What the three wrappers share: ``metainfo``, initialising on first read, no subsets."""

    _metainfo: dict
    _fully_initialized: bool = False

    @property
    def metainfo(self) -> dict:
        """The wrapped (first) dataset's meta information: a copy."""
        return copy.deepcopy(self._metainfo)

    def _wrap(self, dataset: Any, lazy_init: bool) -> None:
        """Build the one wrapped ``dataset``, take its metainfo, initialise unless lazy."""
        self.dataset = _build_dataset(dataset, f"{type(self).__name__} dataset")
        self._metainfo = _metainfo_of(self.dataset)
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def get_subset_(self, indices: int | Sequence[int]) -> None:
        """Not supported: which samples a subset of a wrapper holds would be ambiguous."""
        raise NotImplementedError(
            f"{type(self).__name__} has no get_subset/get_subset_: what a subset of the "
            "wrapper means is ambiguous. Take the subset of the wrapped dataset (its "
            "`indices` argument, or its get_subset) and wrap that."
        )

    def get_subset(self, indices: int | Sequence[int]) -> Any:
        """Not supported, as ``get_subset_``."""
        self.get_subset_(indices)


def _build_dataset(dataset: Any, where: str) -> Any:
    """A dataset from a config dict (``DATASETS``) or a dataset object."""
    if isinstance(dataset, Mapping):
        return DATASETS.build(dataset)
    is_dataset = hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")
    if is_dataset and not isinstance(dataset, (str, bytes)):
        return dataset
    raise TypeError(
        f"{where} must be a dataset or a config dict such as dict(type='MyDataset', ...), "
        f"but got {type(dataset).__name__}: {dataset!r}"
    )


def _full_init(dataset: Any) -> None:
    if hasattr(dataset, "full_init"):
        dataset.full_init()


def _metainfo_of(dataset: Any) -> dict:
    return dict(getattr(dataset, "metainfo", None) or {})


@DATASETS.register_module()
class ConcatDataset(_DatasetWrapper, _TorchConcatDataset):
    """The samples of ``datasets`` one after another; MMEngine's ConcatDataset::

        dataset = dict(type='ConcatDataset', datasets=[dict(type='A', ...), dict(type='B', ...)])

    The datasets must agree on their ``metainfo`` (the same keys, of the same types and
    values), except for the keys in ``ignore_keys``; the first one's is the wrapper's.
    """

    def __init__(
        self,
        datasets: Sequence[Any],
        lazy_init: bool = False,
        ignore_keys: str | list[str] | None = None,
    ) -> None:
        if isinstance(datasets, (str, Mapping)) or not isinstance(datasets, Sequence):
            raise TypeError(
                "ConcatDataset datasets must be a list of datasets or config dicts, but got "
                f"{type(datasets).__name__}"
            )
        if not datasets:
            raise ValueError("ConcatDataset datasets is empty; give at least one dataset")
        self.datasets = [
            _build_dataset(dataset, f"ConcatDataset datasets[{i}]")
            for i, dataset in enumerate(datasets)
        ]
        if ignore_keys is None:
            ignore_keys = []
        elif isinstance(ignore_keys, str):
            ignore_keys = [ignore_keys]
        elif not isinstance(ignore_keys, (list, tuple)):
            raise TypeError(
                "ConcatDataset ignore_keys must be a str or a list of str, but got "
                f"{type(ignore_keys).__name__}: {ignore_keys!r}"
            )
        self.ignore_keys = list(ignore_keys)
        _check_same_metainfo(self.datasets, self.ignore_keys)
        self._metainfo = _metainfo_of(self.datasets[0])
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def full_init(self) -> None:
        """Initialise every dataset and count their samples."""
        if self._fully_initialized:
            return
        for dataset in self.datasets:
            _full_init(dataset)
        _TorchConcatDataset.__init__(self, self.datasets)  # sets cumulative_sizes
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> tuple[int, int]:
        """``(dataset index, sample index in it)`` of the wrapper's sample ``idx``."""
        position = check_index(idx, len(self))
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, position)
        offset = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return dataset_idx, position - offset

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """The data info of sample ``idx``, from the dataset it belongs to."""
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx].get_data_info(sample_idx)

    @force_full_init
    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> Any:
        init_on_first_read(self)
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx][sample_idx]


def _check_same_metainfo(datasets: list[Any], ignore_keys: list[str]) -> None:
    """Raise when the datasets' metainfos differ in a key outside ``ignore_keys``: ValueError
    for a missing key or another value, TypeError for another type (MMEngine's error types)."""
    metainfos = [_metainfo_of(dataset) for dataset in datasets]
    keys = sorted({key for metainfo in metainfos for key in metainfo} - set(ignore_keys), key=str)
    first = metainfos[0]
    hint = "; list the key in ignore_keys if the datasets may differ there"
    for i, metainfo in enumerate(metainfos):
        for key in keys:
            if key not in metainfo:
                has = next(j for j, m in enumerate(metainfos) if key in m)
                if not hasattr(datasets[i], "metainfo"):
                    raise ValueError(
                        f"ConcatDataset: datasets[{i}] (a {type(datasets[i]).__name__}) has no "
                        f"metainfo, but datasets[{has}].metainfo has {key!r}; give it a "
                        "metainfo (a dict, as BaseDataset has) with the same values, or list "
                        "the keys it lacks in ignore_keys"
                    )
                raise ValueError(
                    f"ConcatDataset: datasets[{i}].metainfo has no {key!r}, which "
                    f"datasets[{has}] has{hint}"
                )
            if type(metainfo[key]) is not type(first[key]):
                raise TypeError(
                    f"ConcatDataset: datasets[{i}].metainfo[{key!r}] is a "
                    f"{type(metainfo[key]).__name__}, but datasets[0]'s is a "
                    f"{type(first[key]).__name__}{hint}"
                )
            if not _same_value(metainfo[key], first[key]):
                raise ValueError(
                    f"ConcatDataset: datasets[{i}].metainfo[{key!r}] = {metainfo[key]!r} "
                    f"differs from datasets[0]'s {first[key]!r}{hint}"
                )


def _same_value(a: Any, b: Any) -> bool:
    # numpy arrays, tensors: shapes first, as == broadcasts or raises on other shapes
    if getattr(a, "shape", None) != getattr(b, "shape", None):
        return False
    equal = a == b
    return equal if isinstance(equal, bool) else bool(equal.all())


@DATASETS.register_module()
class RepeatDataset(_DatasetWrapper):
    """``dataset`` repeated ``times`` times in one epoch (fewer, longer epochs for a small
    dataset that is slow to start iterating); MMEngine's RepeatDataset::

        dataset = dict(type='RepeatDataset', times=3, dataset=dict(type='MyDataset', ...))
    """

    def __init__(self, dataset: Any, times: int, lazy_init: bool = False) -> None:
        if isinstance(times, bool) or not isinstance(times, int) or times < 1:
            raise ValueError(f"RepeatDataset times must be a positive int, but got {times!r}")
        self.times = times
        self._wrap(dataset, lazy_init)

    def full_init(self) -> None:
        """Initialise the wrapped dataset and record its length."""
        if self._fully_initialized:
            return
        _full_init(self.dataset)
        self._ori_len = len(self.dataset)
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        """The wrapped dataset's index of the wrapper's sample ``idx``."""
        # MMEngine takes any idx modulo the length, so iterating a RepeatDataset never ends
        return check_index(idx, len(self)) % self._ori_len

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """The data info of sample ``idx``."""
        return self.dataset.get_data_info(self._get_ori_dataset_idx(idx))

    @force_full_init
    def __len__(self) -> int:
        return self.times * self._ori_len

    def __getitem__(self, idx: int) -> Any:
        init_on_first_read(self)
        return self.dataset[self._get_ori_dataset_idx(idx)]


@DATASETS.register_module()
class ClassBalancedDataset(_DatasetWrapper):
    """Oversample the samples of rare categories (repeat factor sampling, LVIS,
    https://arxiv.org/abs/1908.03195); MMEngine's ClassBalancedDataset::

        dataset = dict(type='ClassBalancedDataset', oversample_thr=1e-3,
                       dataset=dict(type='MyDataset', ...))

    With ``f(c)`` the fraction of samples that contain category ``c`` (``get_cat_ids``),
    a sample ``I`` is repeated ``ceil(max(1, max over c in I of sqrt(oversample_thr / f(c))))``
    times (once if it has no category). The counts are fixed, not random, as in MMEngine.
    """

    def __init__(self, dataset: Any, oversample_thr: float, lazy_init: bool = False) -> None:
        self.oversample_thr = oversample_thr
        self._wrap(dataset, lazy_init)

    def full_init(self) -> None:
        """Initialise the wrapped dataset and list each sample as often as it repeats."""
        if self._fully_initialized:
            return
        _full_init(self.dataset)
        factors = self._get_repeat_factors(self.dataset, self.oversample_thr)
        self.repeat_indices = [
            index for index, factor in enumerate(factors) for _ in range(math.ceil(factor))
        ]
        self._fully_initialized = True

    def _get_repeat_factors(self, dataset: Any, repeat_thr: float) -> list[float]:
        """Each sample's repeat factor (see the class docstring)."""
        if not hasattr(dataset, "get_cat_ids"):
            raise NotImplementedError(
                f"ClassBalancedDataset: {type(dataset).__name__} must implement "
                "get_cat_ids(idx), the category ids of a sample"
            )
        num_samples = len(dataset)
        cat_ids = [set(dataset.get_cat_ids(idx)) for idx in range(num_samples)]
        counts: defaultdict = defaultdict(int)
        for ids in cat_ids:
            for cat_id in ids:
                counts[cat_id] += 1
        # the same float operations as MMEngine, so ceil() rounds the factors alike
        category_repeat = {
            cat_id: max(1.0, math.sqrt(repeat_thr / (count / num_samples)))
            for cat_id, count in counts.items()
        }
        return [max((category_repeat[c] for c in ids), default=1.0) for ids in cat_ids]

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        """The wrapped dataset's index of the wrapper's sample ``idx``."""
        return self.repeat_indices[idx]

    @force_full_init
    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids of sample ``idx``."""
        return self.dataset.get_cat_ids(self._get_ori_dataset_idx(idx))

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """The data info of sample ``idx``."""
        return self.dataset.get_data_info(self._get_ori_dataset_idx(idx))

    @force_full_init
    def __len__(self) -> int:
        return len(self.repeat_indices)

    def __getitem__(self, idx: int) -> Any:
        init_on_first_read(self)
        return self.dataset[self._get_ori_dataset_idx(idx)]
