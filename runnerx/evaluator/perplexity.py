"""Perplexity: token-level loss and perplexity of a language model over a dataset."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from runnerx.evaluator.metric import BaseMetric
from runnerx.evaluator.predictions import batch_field
from runnerx.registry import METRICS


@METRICS.register_module(replaceable=True)
class Perplexity(BaseMetric):
    """Mean negative log-likelihood per token (``loss``) and its exponential (``perplexity``)::

        val_evaluator = dict(type='Perplexity')   # 'lm/loss', 'lm/perplexity'

    The model's predict mode returns, per sequence, the summed token negative log-likelihood
    and the number of tokens it was summed over: ``dict(nll_sum=Tensor[B],
    num_tokens=Tensor[B])`` or a list of per-sample dicts with those keys. Tokens are
    weighted equally across the dataset: loss = total nll / total tokens.
    """

    default_prefix = "lm"

    def process(self, data_batch: object, data_samples: Mapping | Sequence) -> None:
        """Keep one ``[nll_sum, num_tokens]`` row per sequence (one host copy per batch)."""
        if not isinstance(data_samples, Mapping) and len(data_samples) == 0:
            return
        nll_sum = batch_field(data_samples, "nll_sum", "Perplexity").reshape(-1).float()
        num_tokens = batch_field(data_samples, "num_tokens", "Perplexity").reshape(-1)
        rows = torch.stack([nll_sum, num_tokens.to(nll_sum.device, torch.float32)], dim=1)
        self.results.extend(rows.tolist())

    def compute_metrics(self, results: list) -> dict[str, float]:
        """``{'loss': ..., 'perplexity': ...}`` (NaN when there are no tokens)."""
        nll, tokens = torch.tensor(results, dtype=torch.float64).reshape(-1, 2).sum(dim=0)
        loss = nll / tokens
        return {"loss": loss.item(), "perplexity": loss.exp().item()}
