"""Custom ``torch.autograd.Function``s in the flop and activation analyses: one op
``prim::PythonOp.<Name>`` as in MMEngine's trace, reported rather than counted as nothing when
its kernel is invisible to the dispatcher; counted by its ops when they are visible."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

from runnerx.analysis import ActivationAnalyzer, FlopAnalyzer

mm_analysis = pytest.importorskip("mmengine.analysis")


class NumpyGram(torch.autograd.Function):
    """x @ x.T in numpy: a kernel the dispatcher never sees (as an extension's CUDA op)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        array = x.detach().numpy()
        return torch.from_numpy(array @ array.T)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


class TorchGram(torch.autograd.Function):
    """x @ x.T written with torch ops, which the dispatcher sees."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        return x @ x.T

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        return grad


class Applies(nn.Module):
    def __init__(self, function: type) -> None:
        super().__init__()
        self.function = function
        self.fc = nn.Linear(5, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.function.apply(self.fc(x))


INPUTS = (torch.rand(4, 5),)
KEY = "prim::PythonOp.NumpyGram"


def quiet(analyzer):
    return analyzer.unsupported_ops_warnings(False).uncalled_modules_warnings(False)


@pytest.mark.parametrize("kind", ["flops", "activations"])
def test_an_opaque_function_is_reported_and_counted_by_its_handle_as_in_mmengine(kind):
    ours_cls, theirs_cls = {
        "flops": (FlopAnalyzer, mm_analysis.FlopAnalyzer),
        "activations": (ActivationAnalyzer, mm_analysis.ActivationAnalyzer),
    }[kind]
    model = Applies(NumpyGram)
    ours, theirs = quiet(ours_cls(model, INPUTS)), quiet(theirs_cls(model, INPUTS))
    assert ours.total() == theirs.total() > 0  # the linear layer alone
    assert ours.unsupported_ops() == theirs.unsupported_ops() == {KEY: 1}
    ours, theirs = quiet(ours_cls(model, INPUTS)), quiet(theirs_cls(model, INPUTS))
    for analyzer in (ours, theirs):  # MMEngine's handles get graph values: a constant here
        analyzer.set_op_handle(KEY, lambda inputs, outputs: 80)
    assert ours.total() == theirs.total() == quiet(ours_cls(nn.Linear(5, 5), INPUTS)).total() + 80
    assert ours.by_module()[""] == ours.total() and KEY not in ours.unsupported_ops()


def test_a_function_of_torch_ops_counts_its_ops_unless_a_handle_counts_the_call():
    plain = quiet(FlopAnalyzer(Applies(TorchGram), INPUTS))
    linear = quiet(FlopAnalyzer(nn.Linear(5, 5), INPUTS)).total()
    assert plain.total() == linear + 4 * 4 * 5 and plain.unsupported_ops() == {}
    handled = quiet(FlopAnalyzer(Applies(TorchGram), INPUTS))
    handled.set_op_handle("prim::PythonOp.TorchGram", lambda inputs, outputs: 1)
    assert handled.total() == linear + 1  # the call once, not its matmul as well


def test_reentrant_activation_checkpointing_counts_like_the_plain_model():
    class Checkpointed(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(5, 5)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return checkpoint(self.fc, x, use_reentrant=True)

    inputs = (torch.rand(4, 5, requires_grad=True),)
    checkpointed = quiet(FlopAnalyzer(Checkpointed(), inputs))
    assert checkpointed.total() == quiet(FlopAnalyzer(nn.Linear(5, 5), inputs)).total() > 0
    assert checkpointed.unsupported_ops() == {}
    assert (
        torch.autograd.Function.__dict__["apply"].__func__.__module__ == "torch.autograd.function"
    )


def test_item_in_a_forward_is_no_unsupported_op():
    class Reads(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * x.sum().item()

    assert "aten::_local_scalar_dense" not in quiet(FlopAnalyzer(Reads(), INPUTS)).unsupported_ops()
