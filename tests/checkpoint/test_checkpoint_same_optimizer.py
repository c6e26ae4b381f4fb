"""check_same_optimizer: a resume refuses optimizer state of another optimizer type (a
hyperparameter the current optimizer needs is missing) and accepts state whose param groups
hold keys that hooks and constructors added."""

from __future__ import annotations

import pytest
import torch

from runnerx.checkpoint.resume_checks import check_same_optimizer


def make(kind: type[torch.optim.Optimizer], **kwargs) -> torch.optim.Optimizer:
    return kind([torch.nn.Parameter(torch.zeros(2))], lr=0.1, **kwargs)


def test_extra_keys_a_hook_or_constructor_added_are_accepted():
    state = make(torch.optim.SGD, momentum=0.9).state_dict()
    # mmyolo's warmup hook, a layer-decay constructor, mmpretrain's paramwise custom_keys
    state["param_groups"][0].update(initial_momentum=0.9, lr_scale=0.5, fix_lr=True)
    check_same_optimizer(state, make(torch.optim.SGD, momentum=0.9), "epoch_2.pth")


def test_flags_torch_fills_in_on_loading_may_be_missing():
    state = make(torch.optim.Adam).state_dict()
    for flag in ("foreach", "maximize", "capturable", "differentiable", "fused"):
        state["param_groups"][0].pop(flag, None)  # saved by an older torch
    check_same_optimizer(state, make(torch.optim.Adam), "epoch_2.pth")
    make(torch.optim.Adam).load_state_dict(state)  # what the check lets through loads


def test_another_optimizer_type_is_refused_naming_its_keys():
    state = make(torch.optim.SGD, momentum=0.9).state_dict()
    with pytest.raises(ValueError) as caught:
        check_same_optimizer(state, make(torch.optim.Adam), "epoch_2.pth")
    assert str(caught.value).startswith(
        "resume: the optimizer state in epoch_2.pth has dampening, momentum, nesterov, which "
        "Adam does not: it was saved by another optimizer type. Resume with the optimizer"
    )


def test_a_needed_key_missing_without_foreign_ones_is_named():
    state = make(torch.optim.Adam).state_dict()
    del state["param_groups"][0]["betas"]
    with pytest.raises(ValueError, match="epoch_2.pth lacks betas, which Adam needs: it was"):
        check_same_optimizer(state, make(torch.optim.Adam), "epoch_2.pth")
