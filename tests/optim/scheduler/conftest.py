"""Optimizers to schedule and a way to record a schedule, shared by the scheduler tests."""

import logging
import warnings

import pytest
import torch


def _make_optimizer(kind: str = "sgd") -> torch.optim.Optimizer:
    """Two param groups with different values, so per-group bookkeeping is exercised."""
    first, second = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(3))
    groups = [{"params": [first]}, {"params": [second], "lr": 0.05, "weight_decay": 0.02}]
    if kind == "sgd":
        return torch.optim.SGD(groups, lr=0.1, momentum=0.9, weight_decay=1e-3)
    if kind == "adam":
        return torch.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99), weight_decay=1e-3)
    raise ValueError(kind)


def _values(optimizer: torch.optim.Optimizer, key: str) -> list[float]:
    """``key`` of every param group; ``betas0`` reads Adam's ``betas[0]``."""
    if key == "betas0":
        return [group["betas"][0] for group in optimizer.param_groups]
    return [group[key] for group in optimizer.param_groups]


def _record(optimizer, step, key: str = "lr", steps: int = 60) -> list[list[float]]:
    """The values after construction and after each of ``steps - 1`` calls of ``step()``."""
    curve = [_values(optimizer, key)]
    for _ in range(steps - 1):
        step()
        curve.append(_values(optimizer, key))
    return curve


def _run_like_the_hook(optimizer, schedulers, epochs: int, epoch_length: int, key: str = "lr"):
    """Step as ParamSchedulerHook does (iteration-based after every iteration, epoch-based
    after every epoch) and record the value used by every iteration."""
    curve = []
    for _ in range(epochs):
        for _ in range(epoch_length):
            curve.append(_values(optimizer, key))
            for scheduler in schedulers:
                if not scheduler.by_epoch:
                    scheduler.step()
        for scheduler in schedulers:
            if scheduler.by_epoch:
                scheduler.step()
    return curve


def _assert_curves_equal(ours, theirs, rel: float = 1e-12) -> None:
    assert len(ours) == len(theirs)
    for step, (mine, other) in enumerate(zip(ours, theirs)):
        assert mine == pytest.approx(other, rel=rel, abs=1e-15), f"step {step}"


@pytest.fixture(autouse=True)
def _quiet_step_order_warnings():
    # torch and MMEngine warn when a scheduler steps before the optimizer; these tests never train
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"Detected call of `(lr_)?scheduler\.step\(\)`")
        yield


@pytest.fixture
def make_optimizer():
    """``make_optimizer('sgd' | 'adam')``: a fresh optimizer with two param groups."""
    return _make_optimizer


@pytest.fixture
def values():
    """``values(optimizer, key)``: that key of every param group."""
    return _values


@pytest.fixture
def record():
    """``record(optimizer, step, key, steps)``: the values over ``steps`` steps."""
    return _record


@pytest.fixture
def run_like_the_hook():
    """``run_like_the_hook(optimizer, schedulers, epochs, epoch_length, key)``."""
    return _run_like_the_hook


@pytest.fixture
def assert_curves_equal():
    """``assert_curves_equal(ours, theirs, rel)``: equal step by step."""
    return _assert_curves_equal


@pytest.fixture
def current_lines(monkeypatch):
    """The messages that reach the current logger (``print_log``'s) during the test: a
    logger of the test's own is made current meanwhile."""
    lines: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.Logger("current-for-the-test", logging.INFO)
    logger.addHandler(handler)
    monkeypatch.setattr("runnerx.logging.logger._current_logger", logger)
    return lines
