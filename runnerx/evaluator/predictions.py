"""Reading the fields of a batch of predictions, whichever of the two forms a model returns.

A model's ``val_step`` returns either a list of per-sample dicts (MMEngine / mmpretrain
style, ``[dict(pred_score=Tensor[C], gt_label=3), ...]``) or one dict of batched tensors
(``dict(pred_score=Tensor[B, C], gt_label=Tensor[B])``). The built-in metrics read both
through :func:`batch_field`, so they compute on whole batches either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch


def has_field(data_samples: Mapping | Sequence, key: str) -> bool:
    """Whether the predictions carry ``key`` (for per-sample dicts: the first one does)."""
    if isinstance(data_samples, Mapping):
        return key in data_samples
    return len(data_samples) > 0 and key in data_samples[0]


def batch_field(data_samples: Mapping | Sequence, key: str, metric: str) -> torch.Tensor:
    """``key`` of every sample as one tensor with the batch as its first dimension.

    Per-sample values (tensors, or Python numbers such as ``gt_label=3``) are stacked;
    ``metric`` names the metric asking, for the error when ``key`` is missing.
    """
    _check_form(data_samples, metric)
    try:
        if isinstance(data_samples, Mapping):
            return torch.as_tensor(data_samples[key])
        return torch.stack([torch.as_tensor(sample[key]) for sample in data_samples])
    except KeyError:
        raise KeyError(
            f"{metric} needs {key!r} in the model's predictions, but they have "
            f"{_keys(data_samples)}; return it from the model's predict mode"
        ) from None


def _check_form(data_samples: Any, metric: str) -> None:
    if isinstance(data_samples, Mapping) or (
        isinstance(data_samples, Sequence)
        and not isinstance(data_samples, str)
        and (not data_samples or isinstance(data_samples[0], Mapping))
    ):
        return
    got = f"a {type(data_samples).__name__}"
    if isinstance(data_samples, Sequence) and data_samples:
        got += f" of {type(data_samples[0]).__name__}"
    elif getattr(data_samples, "shape", None) is not None:
        got += f" of shape {tuple(data_samples.shape)}"
    raise predictions_error(metric, "val_step / test_step", got)


def predictions_error(reader: str, source: str, got: str) -> TypeError:
    """The error for predictions that the metrics cannot read: ``reader`` (a metric, or an
    evaluator's config key) says what read them, ``source`` (e.g. ``'MyNet.val_step'``) what
    returned them and ``got`` what they were (``'None'``, ``'a Tensor of shape (8, 3)'``)."""
    return TypeError(
        f"{reader} reads the model's predictions (what {source} returns) as a dict of batched "
        f"values or a list of per-sample dicts, but got {got}; return e.g. "
        "dict(pred_score=logits.softmax(-1), gt_label=data_samples) from forward(mode='predict'), "
        "which BaseModel's val_step and test_step return"
    )


def _keys(data_samples: Any) -> str:
    first = data_samples if isinstance(data_samples, Mapping) else data_samples[0]
    keys = list(first.keys()) if isinstance(first, Mapping) else None
    return f"keys {keys}" if keys is not None else f"a {type(first).__name__}"
