"""load_model_weights (what ``load_from`` uses): key remapping, strictness, shape mismatches."""

from __future__ import annotations

import logging
import re

import pytest
import torch
from torch import nn

from runnerx.checkpoint import load_model_weights
from runnerx.logging import logger as logger_module


def classifier(classes: int = 3, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, classes))


def state_of(model: nn.Module, prefix: str = "") -> dict:
    return {f"{prefix}{key}": value.clone() for key, value in model.state_dict().items()}


def test_a_ddp_prefix_is_dropped_by_default():
    source, target = classifier(), classifier(seed=1)
    missing, unexpected = load_model_weights(target, {"state_dict": state_of(source, "module.")})
    assert (missing, unexpected) == ([], [])
    assert torch.equal(target[0].weight, source[0].weight)


def test_revise_keys_rename_and_a_plain_state_dict_loads():
    source, target = classifier(), classifier(seed=1)
    checkpoint = state_of(source, "backbone.")  # no 'state_dict' entry: the dict is the weights
    load_model_weights(target, checkpoint, strict=True, revise_keys=[(r"^backbone\.", "")])
    assert torch.equal(target[2].bias, source[2].bias)


def test_missing_and_unexpected_keys_are_returned_or_raised_when_strict():
    source, target = classifier(), classifier(seed=1)
    state = state_of(source)
    state["extra.weight"] = torch.zeros(1)
    del state["2.bias"]
    missing, unexpected = load_model_weights(target, state)
    assert (missing, unexpected) == (["2.bias"], ["extra.weight"])
    with pytest.raises(RuntimeError, match="2.bias"):
        load_model_weights(target, state, strict=True)


def test_a_head_of_another_shape_is_skipped_with_a_logged_warning_unless_strict(
    monkeypatch, caplog
):
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("load_weights_test"))
    pretrained, finetuned = classifier(10), classifier(3, seed=1)
    head_before = finetuned[2].weight.clone()
    missing, _ = load_model_weights(finetuned, {"state_dict": state_of(pretrained)})
    [warning] = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert re.search(
        r"2 checkpoint tensor.*2\.weight: checkpoint \(10, 8\), model \(3, 8\)", warning
    )
    assert missing == []  # not loaded because of their shape, which the warning says, not absent
    assert torch.equal(finetuned[0].weight, pretrained[0].weight)
    assert torch.equal(finetuned[2].weight, head_before)
    with pytest.raises(RuntimeError, match="size mismatch"):
        load_model_weights(finetuned, {"state_dict": state_of(pretrained)}, strict=True)
