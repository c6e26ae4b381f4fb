"""Accuracy: top-k classification accuracy in percent, with mmpretrain's arguments and keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from runnerx.evaluator.metric import BaseMetric
from runnerx.evaluator.predictions import batch_field, has_field
from runnerx.registry import METRICS


@METRICS.register_module(replaceable=True)
class Accuracy(BaseMetric):
    """Top-k accuracy (percent: 96.5 means 96.5 %), as mmpretrain's ``Accuracy``::

        val_evaluator = dict(type='Accuracy', topk=(1, 5))   # 'accuracy/top1', 'accuracy/top5'

    Predictions carry ``gt_label`` (one class index per sample) and either ``pred_score``
    (class scores, usually softmax probabilities) or ``pred_label``; per-sample dicts or one
    dict of batched tensors.

    Args:
        topk: the k of each top-k accuracy.
        thrs: a score threshold or several; a prediction counts only when its score is
            above it (None: no threshold). With several, keys read ``'top1_thr-0.50'`` (and
            ``'top1_no-thr'`` for None). The default 0.0 expects non-negative scores such as
            probabilities: pass ``thrs=None`` when ``pred_score`` holds raw logits.
        collect_device, prefix: as in :class:`BaseMetric`.

    With ``pred_label`` only top-1 accuracy exists, reported as ``'top1'``.
    """

    default_prefix = "accuracy"

    def __init__(
        self,
        topk: int | Sequence[int] = (1,),
        thrs: float | Sequence[float | None] | None = 0.0,
        collect_device: str = "cpu",
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.topk = (topk,) if isinstance(topk, int) else tuple(topk)
        if not self.topk or not all(isinstance(k, int) and k >= 1 for k in self.topk):
            raise ValueError(f"Accuracy topk must be positive ints, but got {topk!r}")
        self.thrs = (thrs,) if thrs is None or isinstance(thrs, (int, float)) else tuple(thrs)
        if not self.thrs:
            raise ValueError("Accuracy thrs must name at least one threshold (or None)")
        self.maxk = max(self.topk)

    def process(self, data_batch: object, data_samples: Mapping | Sequence) -> None:
        """Reduce each sample to where its label ranks among the top predictions.

        A sample's result row holds, per threshold, the position (0-based) of the true
        label among the ``maxk`` best-scored classes whose score passes the threshold, or
        ``maxk`` when it is not among them; it is top-k correct when that is below k. A few
        ints per sample keep the gather across ranks cheap and in dataset order, and cost
        one small device-to-host copy per batch. With ``pred_label`` a row is a bool.
        """
        if not isinstance(data_samples, Mapping) and len(data_samples) == 0:
            return
        gt_label = batch_field(data_samples, "gt_label", "Accuracy")
        if not has_field(data_samples, "pred_score"):
            pred_label = batch_field(data_samples, "pred_label", "Accuracy")
            samples = _batch_size(data_samples, pred_label)
            source = f"a batch of size {samples}"
            pred_label = _one_index_each(pred_label, "pred_label", samples, source)
            gt_label = _one_index_each(gt_label, "gt_label", samples, source)
            self.results.extend((pred_label == gt_label.to(pred_label.device)).tolist())
            return
        scores = batch_field(data_samples, "pred_score", "Accuracy").float()
        if scores.ndim != 2:
            raise ValueError(
                "Accuracy expects pred_score of shape [num_classes] per sample (or "
                f"[batch, num_classes] batched), but got {tuple(scores.shape)}"
            )
        if self.maxk > scores.shape[1]:
            raise ValueError(
                f"Accuracy topk={self.topk} asks for top-{self.maxk} accuracy, but pred_score "
                f"has only {scores.shape[1]} classes; lower topk in val_evaluator / "
                "test_evaluator"
            )
        source = f"pred_score of shape {tuple(scores.shape)}"
        gt_label = _one_index_each(gt_label, "gt_label", scores.shape[0], source)
        top_scores, top_labels = scores.topk(self.maxk, dim=1)
        hits = top_labels == gt_label.to(top_labels.device)[:, None]  # one True per row at most
        positions = [
            self._first_hit(hits if thr is None else hits & (top_scores > thr)) for thr in self.thrs
        ]
        self.results.extend(torch.stack(positions, dim=1).tolist())

    def _first_hit(self, hits: torch.Tensor) -> torch.Tensor:
        return torch.where(hits.any(dim=1), hits.int().argmax(dim=1), self.maxk)

    def compute_metrics(self, results: list) -> dict[str, float]:
        """``{'top1': ..., 'top5': ...}`` in percent (NaN when there are no results)."""
        if results and isinstance(results[0], bool):
            return {"top1": 100.0 * sum(results) / len(results)}
        positions = torch.tensor(results, dtype=torch.long).reshape(-1, len(self.thrs))
        metrics = {}
        for k in self.topk:
            percent = (positions < k).sum(dim=0).double().mul(100.0).div(len(positions)).tolist()
            for thr, value in zip(self.thrs, percent):
                metrics[self._key(k, thr)] = value
        return metrics

    def _key(self, k: int, thr: float | None) -> str:
        if len(self.thrs) == 1:
            return f"top{k}"
        return f"top{k}_no-thr" if thr is None else f"top{k}_thr-{thr:.2f}"


def _batch_size(data_samples: Mapping | Sequence, batched: torch.Tensor) -> int:
    """How many samples the predictions hold: per-sample dicts count themselves, a dict of
    batched values has them along the first dimension of ``batched``."""
    if not isinstance(data_samples, Mapping):
        return len(data_samples)
    return batched.shape[0] if batched.ndim else 1


def _one_index_each(values: torch.Tensor, key: str, samples: int, source: str) -> torch.Tensor:
    """``values`` (the predictions' ``key``) as one class index per sample, shape
    ``[samples]``; a ValueError saying what it got otherwise (a one-hot label would broadcast
    against the scores and count wrong results without a word)."""
    if values.numel() != samples:
        raise ValueError(
            f"Accuracy expects one class index per sample in {key} ({samples} for {source}: "
            f"an int or a Tensor[1] per sample, or a Tensor[{samples}] batched), but got {key} "
            f"of shape {tuple(values.shape)}; for one-hot or soft labels give "
            f"{key}=labels.argmax(-1)"
        )
    return values.reshape(-1)
