"""Evaluator: runs a list of metrics over a validation or test pass; build_evaluator."""

from __future__ import annotations

import hashlib
import logging
import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

import numpy as np
import torch

from runnerx.config.config_dict import with_config_key
from runnerx.dist import all_gather_object, get_world_size, is_main_process
from runnerx.evaluator.metric import BaseMetric
from runnerx.logging.logger import print_log
from runnerx.registry import EVALUATOR, METRICS
from runnerx.structures import BaseDataElement
from runnerx.utils.errors import ValueAssertionError


def _as_metric(item: Any, where: str) -> BaseMetric:
    """``item`` built with METRICS when it is a config, or itself when it is a metric."""
    if isinstance(item, Mapping):
        return METRICS.build(item)
    if isinstance(item, BaseMetric):
        return item
    raise TypeError(
        f"{where} must be a metric config such as dict(type='Accuracy') or a BaseMetric, "
        f"but got {type(item).__name__}: {item!r}"
    )


@EVALUATOR.register_module()
class Evaluator:
    """Feeds every batch of predictions to its metrics and merges their results::

        val_evaluator = dict(type='Evaluator', metrics=[dict(type='Accuracy', topk=(1, 5))])

    Args:
        metrics: a metric (config dict or BaseMetric) or a list of them.
    """

    def __init__(self, metrics: Mapping | BaseMetric | Sequence[Mapping | BaseMetric]) -> None:
        if isinstance(metrics, (Mapping, BaseMetric)):
            metrics = [metrics]
        elif not isinstance(metrics, Sequence) or isinstance(metrics, str):
            raise TypeError(
                "Evaluator metrics must be a metric config, a BaseMetric or a list of them, "
                f"but got {type(metrics).__name__}: {metrics!r}"
            )
        self.metrics: list[BaseMetric] = [
            _as_metric(item, f"Evaluator metrics[{index}]") for index, item in enumerate(metrics)
        ]
        self._dataset_meta: dict | None = None

    @property
    def dataset_meta(self) -> dict | None:
        """The dataset's meta information; setting it sets it on every metric."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta
        for metric in self.metrics:
            metric.dataset_meta = dataset_meta

    def process(self, data_samples: Any, data_batch: Any = None) -> None:
        """Give one batch to every metric: the model's predictions and the dataloader's batch.

        The arguments come in the opposite order to ``BaseMetric.process``, as in MMEngine.
        Predictions that are data elements (``runnerx.structures``) reach the metrics as dicts
        (``to_dict()``), as in MMEngine, so metrics read ``sample['pred_score']`` either way.
        A tuple, a tensor or array (its rows) or a one-shot iterable (a generator) is made a
        list, as MMEngine makes every batch one, so every metric sees all of it; a dict of
        batched values (runnerx's fast form, see docs/evaluation.md) is passed as it is.
        """
        if isinstance(data_samples, (tuple, torch.Tensor, np.ndarray, Iterator)):
            data_samples = list(data_samples)
        # Only the first sample is checked: a batch of dicts costs one isinstance.
        if (
            isinstance(data_samples, list)
            and data_samples
            and isinstance(data_samples[0], BaseDataElement)
        ):
            data_samples = [
                sample.to_dict() if isinstance(sample, BaseDataElement) else sample
                for sample in data_samples
            ]
        for metric in self.metrics:
            metric.process(data_batch, data_samples)

    def evaluate(self, size: int) -> dict:
        """Every metric's results on the ``size`` samples of the dataset, in one dict.

        Every metric's ``results`` are cleared afterwards, also when one of them raises, so
        that a caller who catches the error and evaluates again counts no sample twice.
        """
        merged: dict = {}
        producer: dict[str, str] = {}
        try:
            for index, metric in enumerate(self.metrics):
                name = f"metrics[{index}] ({type(metric).__name__})"
                for key, value in metric.evaluate(size).items():
                    if key in merged:
                        raise ValueError(
                            f"Evaluator: {producer[key]} and {name} both produce {key!r}; give "
                            "one of them another prefix, e.g. dict(type=..., prefix='other')"
                        )
                    merged[key] = value
                    producer[key] = name
        finally:
            self._clear_results()
        return merged

    def _clear_results(self) -> None:
        for metric in self.metrics:
            metric.results.clear()

    def offline_evaluate(
        self, data_samples: Iterable, data: Iterable | None = None, chunk_size: int = 1
    ) -> dict:
        """Evaluate stored predictions (and optionally the data they came from) without a
        model, ``chunk_size`` samples at a time; data chunks are collated by pseudo_collate.

        Both are read by iterating, as in MMEngine: a list, a map-style dataset (indexed by
        int only) or a generator.

        Call it in one process, or, under a process group, on every rank with that rank's own
        part: ``data_samples[rank::world_size]`` (and ``data[rank::world_size]``); the
        dataset's size is then the sum of the parts (MMEngine's is each rank's own count).
        Every rank passing the whole list counts each sample once per rank: a warning says
        so when the ranks' predictions hash the same.
        """
        if not isinstance(chunk_size, int) or chunk_size < 1:
            raise ValueError(f"chunk_size must be a positive int, but got {chunk_size!r}")
        collate = data_iter = None
        if data is not None:
            sized = hasattr(data_samples, "__len__") and hasattr(data, "__len__")
            if sized and len(data) != len(data_samples):
                raise _length_mismatch(len(data_samples), len(data))
            # imported here: only offline evaluation with data needs the data package
            from runnerx.data import pseudo_collate as collate

            data_iter = _bounded_iter(data)
        size = 0
        fingerprint = _Fingerprint() if get_world_size() > 1 else None
        for chunk in _chunks(data_samples, chunk_size):
            size += len(chunk)
            if fingerprint is not None:
                fingerprint.update(chunk)
            data_batch = None
            if data_iter is not None:
                data_chunk = list(islice(data_iter, len(chunk)))
                if len(data_chunk) != len(chunk):
                    raise _length_mismatch(f"at least {size}", size - len(chunk) + len(data_chunk))
                data_batch = collate(data_chunk)
            self.process(chunk, data_batch)
        data_length = None if data_iter is None else _length_beyond(data, data_iter, size)
        if data_length is not None:
            raise _length_mismatch(size, data_length)
        if fingerprint is not None:
            size = self._size_of_the_parts(size, fingerprint.digest())
        return self.evaluate(size)

    def _size_of_the_parts(self, size: int, digest: str | None) -> int:
        """The sum of every rank's ``size``; warn (rank 0) when the ranks' predictions
        (``digest``) are all the same: most likely every rank passed the whole list, which
        counts each sample once per rank. Parts that only happen to be equal (a constant
        prediction) look the same, so this is a warning, not an error."""
        parts = all_gather_object((size, digest))
        same = all(part == (size, digest) for part in parts)
        if size and digest is not None and same and is_main_process():
            print_log(
                f"Evaluator.offline_evaluate: all {len(parts)} ranks passed the same {size} "
                "predictions. If each rank passed the whole list, every sample is counted "
                f"{len(parts)} times (a mean is unchanged; counts and dumped results are not): "
                "give each rank its own part, offline_evaluate(data_samples[rank::world_size], "
                "data=data[rank::world_size]), or call it in a single process",
                logger="current",
                level=logging.WARNING,
            )
        return sum(part_size for part_size, _ in parts)


def build_evaluator(cfg: Any, key: str = "val_evaluator") -> Evaluator:
    """An Evaluator from any form MMEngine's Runner accepts for ``val_evaluator`` /
    ``test_evaluator`` (``key`` names the config key in errors)::

        val_evaluator = dict(type='Accuracy', topk=(1, 5))             # one metric
        val_evaluator = [dict(type='Accuracy'), dict(type='MyMetric')]  # several
        val_evaluator = dict(type='Evaluator', metrics=[dict(type='Accuracy')])

    An Evaluator is returned as it is; a BaseMetric is wrapped in one.
    """
    if isinstance(cfg, Evaluator):
        return cfg
    if isinstance(cfg, Mapping) and "metrics" in cfg:
        return EVALUATOR.build(cfg, default_args={"type": "Evaluator"})
    if isinstance(cfg, (Mapping, BaseMetric)):
        return Evaluator([_as_metric(_keyed(cfg, key), key)])
    if isinstance(cfg, (list, tuple)):
        return Evaluator(
            [_as_metric(_keyed(item, f"{key}.{i}"), f"{key}[{i}]") for i, item in enumerate(cfg)]
        )
    raise TypeError(
        f"{key} must be a metric config such as dict(type='Accuracy'), a list of them, "
        "dict(type='Evaluator', metrics=[...]), an Evaluator or a BaseMetric, but got "
        f"{type(cfg).__name__}: {cfg!r}"
    )


def _keyed(item: Any, key: str) -> Any:
    """A metric config whose build errors name it ``cfg.{key}`` (anything else as it is)."""
    return with_config_key(item, key) if isinstance(item, Mapping) else item


_END = object()


def _chunks(items: Iterable, size: int) -> Iterator[list]:
    """``items`` as lists of ``size`` (the last one shorter), read by iterating."""
    iterator = _bounded_iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _bounded_iter(items: Iterable) -> Iterator:
    """An iterator over ``items`` that stops at ``len(items)`` where there is one: a map-style
    dataset may answer any index (Python's ``iter`` asks until an IndexError)."""
    return islice(items, len(items)) if hasattr(items, "__len__") else iter(items)


def _length_beyond(data: Iterable, data_iter: Iterator, used: int) -> int | str | None:
    """``data``'s length (for an error) when it holds more than the ``used`` items taken from
    ``data_iter``, else None."""
    if hasattr(data, "__len__"):
        return len(data) if len(data) > used else None
    return None if next(data_iter, _END) is _END else f"more than {used}"


class _Fingerprint(pickle.Pickler):
    """A hash of the chunks of predictions pickled into it, with tensors pickled as their
    dtype, shape and values: pickle writes a tensor's storage under a key that differs from
    process to process. Its digest is None once a chunk could not be pickled."""

    def __init__(self) -> None:
        self._hash: Any = hashlib.sha1(usedforsecurity=False)
        super().__init__(self, protocol=pickle.HIGHEST_PROTOCOL)  # self.write is the file

    def write(self, data: bytes) -> None:
        self._hash.update(data)

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            values = obj.detach().cpu().flatten().view(torch.uint8).numpy().tobytes()
            return (str(obj.dtype), tuple(obj.shape), values)
        return None

    def update(self, chunk: list) -> None:
        if self._hash is None:
            return
        try:
            self.dump(chunk)
        except Exception:  # pickling raises many types (TypeError, PicklingError, ...)
            self._hash = None
        self.clear_memo()  # else the memo keeps every chunk alive

    def digest(self) -> str | None:
        return None if self._hash is None else self._hash.hexdigest()


def _length_mismatch(samples: int | str, data: int | str) -> ValueAssertionError:
    return ValueAssertionError(
        f"data_samples and data must have the same length, but have {samples} and {data}"
    )
