"""Shared fixtures for the model tests: a fake optim wrapper and a tensor that counts calls."""

import contextlib
from collections import Counter

import pytest
import torch

#: tensor methods that read a value back from the device (a host-device sync on GPU)
SYNCING_CALLS = {"item", "cpu", "tolist", "numpy", "__float__", "__int__", "__bool__"}


class CountingTensor(torch.Tensor):
    """A tensor that counts the tensor methods called on it (``.to``, ``.item``, ...)."""

    calls: Counter = Counter()

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls[getattr(func, "__name__", str(func))] += 1
        return super().__torch_function__(func, types, args, kwargs or {})


@pytest.fixture
def counting_tensor():
    """``make(tensor)`` -> a CountingTensor view of it; ``make.calls`` counts calls by name,
    ``make.syncing_calls`` names the calls that would sync with a GPU."""
    CountingTensor.calls = Counter()

    def make(tensor):
        return tensor.as_subclass(CountingTensor)

    make.calls = CountingTensor.calls
    make.syncing_calls = SYNCING_CALLS
    return make


class FakeOptimWrapper:
    """What BaseModel.train_step needs of an OptimWrapper, recording the order of events."""

    def __init__(self, model, lr=0.1, events=None):
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.events = [] if events is None else events

    @contextlib.contextmanager
    def optim_context(self, model):
        self.events.append("enter")
        yield
        self.events.append("exit")

    def update_params(self, loss):
        self.events.append("update")
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


@pytest.fixture
def fake_optim_wrapper():
    """The FakeOptimWrapper class."""
    return FakeOptimWrapper


@pytest.fixture(autouse=True)
def single_thread():
    """Run torch on one thread: these tiny models gain nothing from more, and on a busy
    2-core machine competing threads make them many times slower."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
