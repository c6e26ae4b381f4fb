"""IterTimerHook: data_time and time per iteration, from a controlled clock."""

import pytest

from runnerx.hooks import IterTimerHook, iter_timer_hook


@pytest.fixture
def clock(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(iter_timer_hook, "perf_counter", lambda: now[0])
    return now


@pytest.mark.parametrize("mode", ["train", "val", "test"])
def test_data_time_runs_from_the_previous_iteration_and_time_covers_the_whole_one(
    runner, clock, mode
):
    hook = IterTimerHook()
    getattr(hook, f"before_{mode}_epoch")(runner)
    for waited, computed in [(0.5, 2.0), (0.25, 1.0)]:
        clock[0] += waited
        getattr(hook, f"before_{mode}_iter")(runner, 0)
        clock[0] += computed
        getattr(hook, f"after_{mode}_iter")(runner, 0)
    scalars = runner.message_hub.scalars
    assert scalars[f"{mode}/data_time"] == [0.5, 0.25]
    assert scalars[f"{mode}/time"] == [2.5, 1.25]
    assert set(scalars) == {f"{mode}/data_time", f"{mode}/time"}
    assert runner.message_hub.runtime_info == {}  # nothing else is stored per iteration


def test_the_clock_restarts_at_each_epoch(runner, clock):
    hook = IterTimerHook()
    hook.before_train_epoch(runner)
    clock[0] += 5.0  # e.g. validation between epochs
    hook.before_train_epoch(runner)
    clock[0] += 0.5
    hook.before_train_iter(runner, 0)
    assert runner.message_hub.scalars["train/data_time"] == [0.5]


def test_with_a_message_hub_times_are_appended_and_read_as_usual(runner, clock):
    from runnerx.logging import MessageHub

    runner.message_hub = hub = MessageHub("iter_timer_real_hub")
    hook = IterTimerHook()
    hook.before_train_epoch(runner)
    for waited, computed in [(0.5, 2.0), (0.25, 1.0), (0.25, 3.0)]:
        clock[0] += waited
        hook.before_train_iter(runner, 0)
        clock[0] += computed
        hook.after_train_iter(runner, 0)
    assert hub.get_scalar("train/data_time").mean() == pytest.approx(1.0 / 3)
    assert hub.get_scalar("train/time").mean(2) == pytest.approx((1.25 + 3.25) / 2)
    assert hub.get_scalar("train/time").count == 3
