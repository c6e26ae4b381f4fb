"""OptimWrapper methods replaced on an instance (as MMEngine's tests and LR finders do) are
called by update_params; its message_hub is the current MessageHub, and none is made for it."""

import copy
import inspect
from unittest import mock

import pytest
import torch
from torch import nn

from runnerx.logging.message_hub import MessageHub
from runnerx.optim import OptimWrapper


def make_wrapper(model, cls=OptimWrapper, **kwargs):
    return cls(torch.optim.SGD(model.parameters(), lr=0.1), **kwargs)


def loss_of(model):
    return model(torch.ones(1, 2)).sum()


@pytest.mark.parametrize("accumulative_counts", [1, 3])
def test_mmengine_update_params_calls_the_replacements(accumulative_counts):
    """MMEngine's test_update_params: backward, step and zero_grad set on the instance."""
    wrapper = make_wrapper(nn.Linear(2, 1), accumulative_counts=accumulative_counts)
    scaled = []

    def backward(loss):  # a loss without grad: the real backward would fail
        wrapper._inner_count += 1
        scaled.append(loss)

    wrapper.backward = backward
    wrapper.step = mock.MagicMock()
    wrapper.zero_grad = mock.MagicMock()
    for _ in range(accumulative_counts):
        wrapper.update_params(torch.tensor(1.0))
    assert scaled == [torch.tensor(1.0 / accumulative_counts)] * accumulative_counts
    wrapper.step.assert_called_once_with()
    wrapper.zero_grad.assert_called_once_with()


def test_a_counting_step_counts_until_it_is_deleted():
    model = nn.Linear(2, 1)
    wrapper = make_wrapper(model)
    original_step, counted = wrapper.step, []

    def counting_step(**kwargs):
        counted.append(kwargs)
        original_step(**kwargs)

    wrapper.step = counting_step
    before = model.weight.detach().clone()
    wrapper.update_params(loss_of(model))
    wrapper.update_params(loss_of(model), step_kwargs={"closure": None})
    assert counted == [{}, {"closure": None}]
    assert not torch.equal(model.weight, before) and model.weight.grad is None

    del wrapper.step
    assert wrapper.step.__func__ is OptimWrapper.step
    wrapper.update_params(loss_of(model))
    assert len(counted) == 2
    with pytest.raises(AttributeError, match="OptimWrapper.step was not replaced"):
        del wrapper.step


def test_a_subclass_override_and_an_instance_replacement_work_together():
    calls = []

    class Recording(OptimWrapper):
        def step(self, **kwargs):
            calls.append("Recording.step")
            super().step(**kwargs)

    model = nn.Linear(2, 1)
    wrapper = make_wrapper(model, Recording)
    recording_step = wrapper.step
    # a plain instance attribute (Recording's def shadows OptimWrapper's): super() in
    # Recording.step must still reach OptimWrapper.step, not this replacement
    wrapper.step = lambda **kwargs: (calls.append("replacement"), recording_step(**kwargs))
    wrapper.zero_grad = lambda **kwargs: calls.append("zero_grad")
    wrapper.update_params(loss_of(model))
    assert calls == ["replacement", "Recording.step", "zero_grad"]


def test_a_method_patched_on_the_class_is_called():
    method = vars(OptimWrapper)["zero_grad"]
    with mock.patch.object(OptimWrapper, "zero_grad") as patched:
        model = nn.Linear(2, 1)
        make_wrapper(model).update_params(loss_of(model))
    patched.assert_called_once_with()
    assert vars(OptimWrapper)["zero_grad"] is method  # put back as it was


def test_the_methods_keep_their_signatures_and_copies_keep_the_replacements():
    assert list(inspect.signature(OptimWrapper.step).parameters) == ["self", "kwargs"]
    wrapper = make_wrapper(nn.Linear(2, 1))
    assert list(inspect.signature(wrapper.backward).parameters) == ["loss", "kwargs"]
    wrapper.zero_grad = mock.MagicMock()
    copied = copy.deepcopy(wrapper)
    copied.update_params(copied.optimizer.param_groups[0]["params"][0].sum())
    copied.zero_grad.assert_called_once_with()
    wrapper.zero_grad.assert_not_called()


def test_message_hub_is_the_current_hub():
    hub = MessageHub.get_instance("test_optim_wrapper_replaced")
    assert make_wrapper(nn.Linear(2, 1)).message_hub is hub


def test_no_message_hub_is_made_for_a_wrapper_that_logs_nothing(monkeypatch):
    monkeypatch.setattr(MessageHub, "_instances", {})
    monkeypatch.setattr(MessageHub, "_current", None)
    assert make_wrapper(nn.Linear(2, 1)).message_hub is None
    assert MessageHub._instances == {}
    # clipping by norm logs the norm: it needs a hub, and makes one
    clipping = make_wrapper(nn.Linear(2, 1), clip_grad=dict(max_norm=1.0))
    assert clipping.message_hub is MessageHub.get_current_instance()
