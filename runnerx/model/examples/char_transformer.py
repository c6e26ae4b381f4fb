"""CharTransformerLM: a small GPT-style causal language model over bytes/characters.

Its layers are ``TransformerBlock`` modules: strategies that shard, checkpoint or compile per
block find them by that class name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from runnerx.model.base_model import BaseModel
from runnerx.registry import MODELS

#: targets with this value are not scored (as in ``F.cross_entropy``)
IGNORE_INDEX = -100


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which each position sees only itself and earlier ones."""

    def __init__(self, n_embd: int, n_head: int, dropout: float = 0.0) -> None:
        super().__init__()
        if n_embd % n_head:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.dropout = dropout
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.proj_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: ``[B, T, C]`` -> ``[B, T, C]``."""
        batch, length, width = x.shape
        heads = self.qkv(x).view(batch, length, 3, self.n_head, width // self.n_head)
        query, key, value = heads.permute(2, 0, 3, 1, 4)  # each [B, heads, T, head_dim]
        attended = F.scaled_dot_product_attention(
            query, key, value, dropout_p=self.dropout if self.training else 0.0, is_causal=True
        )
        merged = attended.transpose(1, 2).reshape(batch, length, width)
        return self.proj_dropout(self.proj(merged))


class TransformerBlock(nn.Module):
    """Pre-LayerNorm transformer block: ``x + attn(ln(x))``, then ``x + mlp(ln(x))`` with a
    4x GELU MLP."""

    def __init__(self, n_embd: int, n_head: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, dropout)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.GELU(),
            nn.Linear(4 * n_embd, n_embd),
            nn.Dropout(dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, T, C]`` -> ``[B, T, C]``."""
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@MODELS.register_module(replaceable=True)
class CharTransformerLM(BaseModel):
    """Causal character language model: token + position embeddings, ``n_layer``
    ``TransformerBlock``\\ s, a final LayerNorm and an output head tied to the token embedding.

    ``inputs`` are token ids ``[B, T]`` (``T <= block_size``); ``data_samples`` the target ids
    ``[B, T]`` (usually the inputs shifted by one; ``-100`` marks a target not scored)::

        model = dict(type='CharTransformerLM', vocab_size=256, block_size=128, n_layer=4)

    ``'tensor'`` gives logits ``[B, T, V]``; ``'loss'`` gives ``dict(loss=mean token
    cross-entropy)``; ``'predict'`` gives ``dict(nll_sum=Tensor[B], num_tokens=Tensor[B])``,
    the summed negative log-likelihood and the number of scored tokens per sequence.
    """

    def __init__(
        self,
        vocab_size: int = 256,
        block_size: int = 128,
        n_layer: int = 4,
        n_head: int = 4,
        n_embd: int = 128,
        dropout: float = 0.0,
        data_preprocessor: Mapping | nn.Module | None = None,
        init_cfg: Mapping | list[Mapping] | None = None,
    ) -> None:
        super().__init__(data_preprocessor, init_cfg)
        self.block_size = block_size
        self.token_embedding = nn.Embedding(vocab_size, n_embd)
        self.position_embedding = nn.Embedding(block_size, n_embd)
        self.embedding_dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            TransformerBlock(n_embd, n_head, dropout) for _ in range(n_layer)
        )
        self.ln_f = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)
        self.head.weight = self.token_embedding.weight
        self._init_gpt_weights(n_layer)

    def _init_gpt_weights(self, n_layer: int) -> None:
        """GPT-2's initialisation: N(0, 0.02), residual projections scaled by depth."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.blocks:
            for residual_out in (block.attn.proj, block.mlp[2]):
                nn.init.normal_(residual_out.weight, std=0.02 / math.sqrt(2 * n_layer))

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        """Logits (``'tensor'``), ``dict(loss=...)`` or ``dict(nll_sum, num_tokens)``."""
        logits = self._logits(inputs)
        if mode == "tensor":
            return logits
        if not isinstance(data_samples, torch.Tensor) or data_samples.shape != inputs.shape:
            raise ValueError(
                f"mode={mode!r} needs data_samples: the target token ids, a tensor shaped like "
                f"inputs {tuple(inputs.shape)}, but got {_describe(data_samples)}"
            )
        flat_logits = logits.flatten(0, 1)
        if mode == "loss":
            return dict(loss=F.cross_entropy(flat_logits, data_samples.flatten()))
        if mode == "predict":
            nll = F.cross_entropy(flat_logits, data_samples.flatten(), reduction="none")
            return dict(
                nll_sum=nll.view_as(data_samples).sum(dim=1),
                num_tokens=(data_samples != IGNORE_INDEX).sum(dim=1),
            )
        raise ValueError(f"mode must be 'tensor', 'loss' or 'predict', but got {mode!r}")

    def _logits(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        if length > self.block_size:
            raise ValueError(
                f"sequence length {length} is longer than block_size {self.block_size}"
            )
        positions = torch.arange(length, device=tokens.device)
        x = self.embedding_dropout(
            self.token_embedding(tokens) + self.position_embedding(positions)
        )
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

    @torch.no_grad()
    def generate(
        self,
        idx: torch.Tensor,
        max_new_tokens: int,
        temperature: float = 1.0,
        top_k: int | None = None,
    ) -> torch.Tensor:
        """Extend the token ids ``idx`` ``[B, T]`` by sampling ``max_new_tokens`` tokens, each
        from the softmax of the last logits divided by ``temperature`` (only the ``top_k`` most
        likely when given); returns ``[B, T + max_new_tokens]``."""
        for _ in range(max_new_tokens):
            logits = self._logits(idx[:, -self.block_size :])[:, -1, :] / temperature
            if top_k is not None:
                kth_best = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
                logits = logits.masked_fill(logits < kth_best, float("-inf"))
            next_token = torch.multinomial(logits.softmax(dim=-1), num_samples=1)
            idx = torch.cat([idx, next_token], dim=1)
        return idx


def _describe(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"a tensor of shape {tuple(value.shape)}"
    return type(value).__name__
