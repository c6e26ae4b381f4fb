"""EmptyCacheHook: acts only at the chosen points."""

import pytest
import torch

from runnerx.hooks import EmptyCacheHook

EPOCH_POINTS = ["before_train_epoch", "after_train_epoch", "before_val_epoch", "after_test_epoch"]
ITER_POINTS = ["after_train_iter", "after_val_iter", "after_test_iter"]


def call_all(hook, runner):
    for point in EPOCH_POINTS:
        getattr(hook, point)(runner)
    for point in ITER_POINTS:
        getattr(hook, point)(runner, 0)


def test_only_the_chosen_points_are_reported():
    assert EmptyCacheHook().overridden_points() == [
        "after_train_epoch",
        "after_val_epoch",
        "after_test_epoch",
    ]
    everything = EmptyCacheHook(before_epoch=True, after_iter=True).overridden_points()
    assert len(everything) == 9 and "after_train_iter" in everything
    assert EmptyCacheHook(after_epoch=False).overridden_points() == []


def test_on_cpu_it_is_harmless(runner):
    call_all(EmptyCacheHook(before_epoch=True, after_epoch=True, after_iter=True), runner)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, ["after_train_epoch", "after_test_epoch"]),
        ({"before_epoch": True, "after_epoch": False}, ["before_train_epoch", "before_val_epoch"]),
        ({"after_epoch": False, "after_iter": True}, ITER_POINTS),
    ],
)
def test_the_cache_is_emptied_at_the_chosen_points(runner, monkeypatch, kwargs, expected):
    calls, current = [], []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: calls.append(current[-1]))
    hook = EmptyCacheHook(**kwargs)
    for point in EPOCH_POINTS + ITER_POINTS:
        current.append(point)
        method = getattr(hook, point)
        method(runner) if point in EPOCH_POINTS else method(runner, 0)
    assert calls == expected
