"""A loss without a graph: the error of its backward names the loss keys and the causes."""

from __future__ import annotations

import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from runnerx.model import BaseModel
from runnerx.optim import OptimWrapper

pytestmark = pytest.mark.skipif(sys.version_info < (3, 11), reason="exception notes")


class Net(BaseModel):
    def __init__(self, detach: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.detach = detach

    def forward(self, inputs, data_samples=None, mode="tensor"):
        loss = F.cross_entropy(self.fc(inputs), data_samples)
        aux = loss.detach() if self.detach else loss
        return {"loss_cls": aux, "loss_aux": [aux], "acc": torch.tensor(0.5)}


def step(model: Net) -> RuntimeError:
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    batch = {"inputs": torch.randn(4, 3), "data_samples": torch.tensor([0, 1, 0, 1])}
    with pytest.raises(RuntimeError, match="does not require grad") as caught:
        model.train_step(batch, wrapper)
    return caught.value


def test_a_detached_loss_is_named_with_its_keys_and_the_usual_causes():
    notes = " ".join(step(Net()).__notes__)
    assert "Net.forward(mode='loss') returned a loss without a graph" in notes
    assert "summed the keys ['loss_cls', 'loss_aux']" in notes
    assert ".detach()" in notes and ".item()" in notes and "torch.no_grad()" in notes


def test_a_model_with_every_parameter_frozen_is_told_so():
    model = Net(detach=False)
    model.requires_grad_(False)
    assert "every parameter of Net is frozen" in " ".join(step(model).__notes__)
