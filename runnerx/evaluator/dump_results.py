"""DumpResults: save the raw predictions of a validation or test pass to a pickle file.

MMEngine's metric of the same name and arguments: it computes nothing, it keeps every
sample's predictions (on the CPU) and writes them, in dataset order, for offline evaluation::

    test_evaluator = [dict(type='Accuracy'), dict(type='DumpResults', out_file_path='preds.pkl')]

``tools/test.py CONFIG CHECKPOINT --out preds.pkl`` adds one to ``test_evaluator``
(:func:`add_dump_results`); ``--out metrics.json --out-item metrics`` writes the metrics
instead (:func:`dump_metrics`).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import torch

from runnerx.evaluator.evaluator import Evaluator
from runnerx.evaluator.metric import BaseMetric
from runnerx.fileio import atomic_write
from runnerx.logging.logger import print_log
from runnerx.registry import METRICS

_PICKLE_SUFFIXES = (".pkl", ".pickle")
_METRICS_SUFFIXES = (*_PICKLE_SUFFIXES, ".json", ".yaml", ".yml")


def check_pickle_path(path: Any, name: str = "out_file_path") -> str:
    """``path`` (a str or path object) as a str when it ends with .pkl or .pickle; else a
    ValueError that names the argument ``name`` (``'--out'`` for tools/test.py)."""
    return _check_suffix(path, name, _PICKLE_SUFFIXES, "the predictions are saved with pickle")


def check_metrics_path(path: Any, name: str = "--out") -> str:
    """``path`` as a str when :func:`dump_metrics` can write it (.pkl, .pickle, .json, .yaml,
    .yml); else a ValueError that names the argument ``name``."""
    return _check_suffix(path, name, _METRICS_SUFFIXES, "the metrics are saved in that format")


def _check_suffix(path: Any, name: str, suffixes: tuple[str, ...], why: str) -> str:
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path.endswith(suffixes):
        ending = ", ".join(suffixes[:-1]) + f" or {suffixes[-1]}"
        raise ValueError(
            f"{name} must be a file path ending with {ending} ({why}), but got {path!r}"
        )
    return path


def dump_metrics(metrics: Mapping[str, Any], path: str) -> None:
    """Write a test's metrics dict to ``path`` as its suffix says (pickle, JSON or YAML), as
    mmpretrain's ``tools/test.py --out FILE --out-item metrics`` does; tensor and numpy values
    are written as numbers (lists for arrays)."""
    from runnerx.fileio import dump

    dump({key: _map_leaves(value, _plain) for key, value in metrics.items()}, path)
    print_log(f"saved the metrics to {path}")


@METRICS.register_module()
class DumpResults(BaseMetric):
    """Keeps the model's predictions and pickles the list of all of them, one entry per
    sample in dataset order, to ``out_file_path`` (written atomically, on rank 0)::

        test_evaluator = dict(type='DumpResults', out_file_path='work_dirs/preds.pkl')

    Tensors are moved to the CPU. Predictions given as a list keep their entries as they are;
    one dict of batched tensors (``dict(pred_score=Tensor[B, C], gt_label=Tensor[B])``) is
    split into one dict per sample, as the model's list form would have them (MMEngine
    would store the dict's keys instead); a None value in it (``dict(logits=..., y=None)``
    from a loader without labels) is None in each sample's dict, keys and order kept, as
    Lightning's ``trainer.predict`` keeps it in each batch's output. It adds no metric:
    ``evaluate`` returns ``{}``.

    Args:
        out_file_path: the file to write; must end with .pkl or .pickle.
        collect_device, collect_dir: as in :class:`BaseMetric`.
    """

    # No keys come out of this metric; a prefix only spares the "no prefix" warning.
    default_prefix = "dump"

    def __init__(
        self, out_file_path: str, collect_device: str = "cpu", collect_dir: str | None = None
    ) -> None:
        super().__init__(collect_device=collect_device, collect_dir=collect_dir)
        self.out_file_path = check_pickle_path(out_file_path, "DumpResults out_file_path")

    def process(self, data_batch: Any, data_samples: Any) -> None:
        """Add this batch's predictions, one entry per sample, with their tensors on the CPU."""
        # one device-to-host copy per batched tensor, then split
        samples = _per_sample(_map_leaves(data_samples, _to_cpu), "predictions")
        self.results.extend(_map_leaves(sample, _own_storage) for sample in samples)

    def compute_metrics(self, results: list) -> dict:
        """Write ``results`` to ``out_file_path``, log where, and return no metrics."""
        with atomic_write(self.out_file_path, binary=True) as file:
            pickle.dump(results, file)
        print_log(
            f"DumpResults: saved the predictions of {len(results)} samples to {self.out_file_path}"
        )
        return {}


def add_dump_results(evaluator_cfg: Any, out_file_path: str) -> Any:
    """``evaluator_cfg`` (any form ``test_evaluator`` takes) with a DumpResults writing to
    ``out_file_path`` added to its metrics, as ``tools/test.py --out`` does::

        cfg.test_evaluator = add_dump_results(cfg.get('test_evaluator'), 'preds.pkl')

    Configs are not changed in place (``test_evaluator = val_evaluator`` often shares one
    dict); a built Evaluator gets the metric appended. None gives a DumpResults alone.
    """
    dump = dict(type="DumpResults", out_file_path=out_file_path)
    if evaluator_cfg is None:
        return dump
    if isinstance(evaluator_cfg, Evaluator):
        evaluator_cfg.metrics.append(METRICS.build(dump))
        return evaluator_cfg
    if isinstance(evaluator_cfg, Mapping) and "metrics" in evaluator_cfg:
        metrics = evaluator_cfg["metrics"]
        if isinstance(metrics, (Mapping, BaseMetric)):
            metrics = [metrics]
        return {**evaluator_cfg, "metrics": [*metrics, dump]}
    if isinstance(evaluator_cfg, (Mapping, BaseMetric)):
        return [evaluator_cfg, dump]
    if isinstance(evaluator_cfg, (list, tuple)):
        return [*evaluator_cfg, dump]
    raise TypeError(
        "test_evaluator must be a metric config, a list of them or dict(type='Evaluator', "
        f"metrics=[...]) to add DumpResults to it, but got {type(evaluator_cfg).__name__}: "
        f"{evaluator_cfg!r}"
    )


def _map_leaves(data: Any, function: Callable[[Any], Any]) -> Any:
    """``data`` with ``function`` applied to everything in it that is not a dict, list or
    tuple (the containers are rebuilt as dict, list, tuple)."""
    if isinstance(data, Mapping):
        return {key: _map_leaves(value, function) for key, value in data.items()}
    if isinstance(data, list):
        return [_map_leaves(item, function) for item in data]
    if isinstance(data, tuple):
        return tuple(_map_leaves(item, function) for item in data)
    return function(data)


def _to_cpu(leaf: Any) -> Any:
    if isinstance(leaf, torch.Tensor):
        return leaf.detach().cpu()
    if callable(getattr(leaf, "cpu", None)):  # MMEngine's data elements move themselves
        return leaf.cpu()
    return leaf


def _plain(leaf: Any) -> Any:
    return leaf.tolist() if isinstance(leaf, (torch.Tensor, np.ndarray, np.generic)) else leaf


def _own_storage(leaf: Any) -> Any:
    # A row of a batch is a view of the whole batch's storage, and pickle writes that whole
    # storage for every row: copy such views so that each sample pickles its own values only.
    if (
        isinstance(leaf, torch.Tensor)
        and leaf.layout == torch.strided
        and leaf.untyped_storage().nbytes() > leaf.numel() * leaf.element_size()
    ):
        return leaf.clone()
    return leaf


def _per_sample(data_samples: Any, where: str) -> list:
    """The predictions as one entry per sample: a list (or tuple) as it is, a tensor by its
    rows, a dict of batched values as one dict per sample (nested dicts too)."""
    if isinstance(data_samples, (list, tuple)):
        return list(data_samples)
    if isinstance(data_samples, torch.Tensor) and data_samples.ndim > 0:
        return list(data_samples)
    if isinstance(data_samples, Mapping):
        columns = {
            key: _per_sample(value, f"{where}[{key!r}]")
            for key, value in data_samples.items()
            if value is not None
        }
        sizes = {key: len(column) for key, column in columns.items()}
        if len(set(sizes.values())) != 1:
            problem = "different numbers of" if sizes else "no values but None: no"
            raise ValueError(
                f"DumpResults splits a dict of batched {where} into one entry per sample, but "
                f"its values hold {problem} samples: {sizes or dict(data_samples)}"
            )
        # a None value (labels a predict loader lacks) is None in every sample's dict
        size = next(iter(sizes.values()))
        columns = {key: columns.get(key, [None] * size) for key in data_samples}
        return [dict(zip(columns, row)) for row in zip(*columns.values())]
    raise TypeError(
        f"DumpResults needs {where} as a list with one entry per sample, a tensor, or a dict "
        f"of batched tensors or lists, but got {type(data_samples).__name__}: {data_samples!r}"
    )
