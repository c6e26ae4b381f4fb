"""ProgressBar: one self-rewriting line on a terminal, nothing anywhere else."""

import io

import pytest

import runnerx.logging.progress_bar as progress_bar_module
from runnerx.logging import ProgressBar


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(progress_bar_module.time, "monotonic", fake)
    monkeypatch.setenv("COLUMNS", "200")
    return fake


def test_draws_on_the_same_line_at_most_ten_times_a_second(clock):
    terminal = FakeTerminal()
    bar = ProgressBar(40, stream=terminal)
    clock.now += 0.4
    bar.update(12)
    first = "\r[" + ">" * 12 + " " * 28 + "] 12/40, 30.0 it/s, elapsed: 0s, ETA: 1s"
    assert terminal.getvalue() == first
    clock.now += 0.05
    bar.update()  # too soon after the last drawing: nothing
    assert terminal.getvalue() == first
    clock.now += 0.55
    bar.update(7)  # 20 done after 1 s
    assert terminal.getvalue().endswith(
        "\r[" + ">" * 20 + " " * 20 + "] 20/40, 20.0 it/s, elapsed: 1s, ETA: 1s"
    )
    clock.now += 0.01
    bar.update(20)  # the last one is always drawn
    assert terminal.getvalue().endswith("] 40/40, 39.6 it/s, elapsed: 1s, ETA: 0s")
    bar.close()
    assert terminal.getvalue().endswith("ETA: 0s\n")
    # three drawings; close ends the line without drawing the same count again
    assert terminal.getvalue().count("\r") == 3


def test_a_shorter_line_covers_the_longer_one_before_it(clock):
    terminal = FakeTerminal()
    bar = ProgressBar(0, stream=terminal)  # length unknown: count and speed only
    clock.now += 1.0
    bar.update(1000)
    clock.now += 99.0
    bar.update(1)
    drawings = terminal.getvalue().split("\r")[1:]
    assert drawings[0] == "1000, 1000.0 it/s, elapsed: 1s"
    assert drawings[1] == "1001, 10.0 it/s, elapsed: 100s".ljust(len(drawings[0]))


def test_prints_nothing_when_the_stream_is_not_a_terminal(clock):
    stream = io.StringIO()
    with ProgressBar(3, stream=stream) as bar:
        for _ in range(3):
            clock.now += 1
            bar.update()
    assert stream.getvalue() == ""
    assert bar.completed == 3


def test_a_bad_total_is_refused():
    with pytest.raises(ValueError, match="non-negative int"):
        ProgressBar(-1)
