"""BaseMetric: the base of every metric (MMEngine's contract, so metrics written for it port).

A metric collects per-sample results batch by batch in ``process`` and turns them into
numbers in ``compute_metrics``; ``evaluate`` does the distributed part in between::

    from runnerx.evaluator import BaseMetric
    from runnerx.registry import METRICS

    @METRICS.register_module()
    class MeanError(BaseMetric):
        default_prefix = 'error'

        def process(self, data_batch, data_samples):
            for sample in data_samples:
                self.results.append(abs(float(sample['pred']) - float(sample['target'])))

        def compute_metrics(self, results):
            return {'mae': sum(results) / len(results)}

    val_evaluator = dict(type='MeanError')   # logs 'error/mae'
"""

from __future__ import annotations

import logging
from abc import ABCMeta, abstractmethod
from typing import Any

import torch

from runnerx.dist import collect_results, from_rank_zero, get_world_size, is_main_process
from runnerx.logging.logger import print_log
from runnerx.utils import apply_to

# DumpResults comes from the module __getattr__ below
__all__ = ["BaseMetric", "DumpResults"]  # noqa: F822

_COLLECT_DEVICES = ("cpu", "gpu")
#: the metric classes already warned of having no prefix: once per process and class, as
#: MMEngine's logger drops a repeated warning (a script that builds many evaluators)
_WARNED_NO_PREFIX: set[type] = set()


class BaseMetric(metaclass=ABCMeta):
    """A metric: ``process`` batches into ``self.results``, then ``evaluate`` the dataset.

    ``self.results`` should hold **one entry per sample**: ranks see interleaved shares of
    the dataset (rank r gets samples r, r + world, ...) and ``evaluate`` re-interleaves the
    ranks' lists into dataset order and cuts them to the dataset size, which drops the
    duplicates a sampler pads the last batch with. Keep entries small and on the CPU (move
    tensors with ``.cpu()`` in ``process``): all of them are pickled to rank 0. The built-in
    metrics reduce each sample to a few Python numbers, one device-to-host copy per batch.

    Args:
        collect_device: 'cpu' or 'gpu', as in MMEngine; with either, results are gathered
            through the process group (:func:`runnerx.dist.collect_results`).
        prefix: put in front of every key (``'prefix/key'``); defaults to ``default_prefix``.
        collect_dir: with ``collect_device='cpu'``, a directory every rank reaches where the
            ranks leave their results for rank 0 instead (MMEngine's ``tmpdir``); by default
            none is needed.
    """

    #: The prefix used when ``prefix`` is not given, e.g. ``'accuracy'``.
    default_prefix: str | None = None

    def __init__(
        self, collect_device: str = "cpu", prefix: str | None = None, collect_dir: str | None = None
    ) -> None:
        name = type(self).__name__
        if collect_device not in _COLLECT_DEVICES:
            raise ValueError(
                f"{name}: collect_device must be 'cpu' or 'gpu', but got {collect_device!r}"
            )
        if collect_dir is not None and collect_device != "cpu":
            raise ValueError(f"{name}: collect_dir can only be set with collect_device='cpu'")
        self.collect_device = collect_device
        self.collect_dir = collect_dir
        self.prefix = prefix or self.default_prefix
        self.results: list[Any] = []
        self._dataset_meta: dict | None = None
        if self.prefix is None and is_main_process() and type(self) not in _WARNED_NO_PREFIX:
            # a line of the run's log (console and file) on rank 0 only, as MMEngine logs it
            _WARNED_NO_PREFIX.add(type(self))
            print_log(
                f"metric {name} has no prefix (neither prefix= nor default_prefix is set), so "
                "its keys are logged without one",
                logger="current",
                level=logging.WARNING,
            )

    @property
    def dataset_meta(self) -> dict | None:
        """The dataset's meta information (class names, ...), set by the evaluator."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta

    @abstractmethod
    def process(self, data_batch: Any, data_samples: Any) -> None:
        """Add one batch's per-sample results to ``self.results``.

        ``data_batch`` is the batch from the dataloader; ``data_samples`` what the model's
        ``val_step``/``test_step`` returned for it.
        """

    @abstractmethod
    def compute_metrics(self, results: list) -> dict:
        """The metrics (name -> value, without prefix) of the whole dataset's ``results``.

        ``results`` are every rank's results in dataset order; use them, not
        ``self.results``, which holds only this rank's share.
        """

    def evaluate(self, size: int) -> dict:
        """Gather the results of all ranks, compute the metrics on rank 0 and return them,
        prefixed, on every rank. ``size`` is the dataset's length. ``compute_metrics`` gets
        the results with their tensors moved to the CPU; ``self.results`` still holds this
        rank's share while it runs, and is cleared afterwards (also when it raises) for the
        next evaluation."""
        if len(self.results) > size and get_world_size() == 1:  # cut to size below
            print_log(
                f"{type(self).__name__} got {len(self.results)} results for a dataset of {size}: "
                f"only the first {size} are scored. A dataset whose items are whole batches "
                "(a DataLoader with batch_size=None) counts batches, not samples; a process() "
                "that adds several results per sample needs one per sample",
                logger="current",
                level=logging.WARNING,
            )
        try:
            return self._gather_and_compute(size)
        finally:
            self.results.clear()

    def _gather_and_compute(self, size: int) -> dict:
        results = collect_results(self.results, size, self.collect_device, self.collect_dir)
        return from_rank_zero(
            lambda: self._compute(results), f"{type(self).__name__}.compute_metrics"
        )

    def _compute(self, results: list | None) -> dict:
        """The metrics of the gathered ``results`` (rank 0), checked and prefixed."""
        # decided on the gathered results: a rank whose share is empty is no problem
        if not results:  # a line of the run's log, as MMEngine logs it
            print_log(
                f"{type(self).__name__} got no results: its process() did not add anything "
                "to self.results on any rank (or the dataloader was empty)",
                logger="current",
                level=logging.WARNING,
            )
        computed = self.compute_metrics(apply_to(results, _on_device, _to_cpu))
        if not isinstance(computed, dict):
            raise TypeError(
                f"{type(self).__name__}.compute_metrics must return a dict of metric names "
                f"and values, e.g. dict(accuracy=0.93), but returned "
                f"{type(computed).__name__} {computed!r:.80}"
            )
        if self.prefix:
            computed = {f"{self.prefix}/{key}": value for key, value in computed.items()}
        return computed


def _on_device(leaf: Any) -> bool:
    """Whether ``leaf`` is a tensor off the CPU, or a data element (which moves itself)."""
    if isinstance(leaf, torch.Tensor):
        return leaf.device.type != "cpu"
    return callable(getattr(leaf, "cpu", None)) and not isinstance(leaf, torch.nn.Module)


def _to_cpu(leaf: Any) -> Any:
    return leaf.cpu()


def __getattr__(name: str) -> Any:
    """``DumpResults`` at MMEngine's path (``from mmengine.evaluator.metric import
    DumpResults``); looked up on first use because dump_results imports this module."""
    if name == "DumpResults":
        from runnerx.evaluator.dump_results import DumpResults

        return DumpResults
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
