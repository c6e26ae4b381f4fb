"""ProgressBar and the track_* runners: MMEngine's results, a bar written to any file."""

import io

import mmengine.utils as mm
import pytest

import runnerx.utils as rx


def square(x):
    return x * x


def add(x, y=0):
    return x + y


def set_offset(offset):
    global OFFSET
    OFFSET = offset


def plus_offset(x):
    return x + OFFSET


def test_track_progress_returns_mmengine_results_and_draws_to_a_plain_file():
    out = io.StringIO()
    ours = rx.track_progress(add, [1, 2, 3], file=out, y=10)
    assert ours == mm.track_progress(add, [1, 2, 3], file=io.StringIO(), y=10) == [11, 12, 13]
    written = out.getvalue()
    assert written.startswith("\r[") and written.endswith("\n")
    assert ">] 3/3, " in written  # the bar ends full
    generator_tasks = ((n for n in range(4)), 4)
    assert rx.track_progress(square, generator_tasks, file=out) == [0, 1, 4, 9]


def test_track_iter_progress_yields_each_task():
    out = io.StringIO()
    assert list(rx.track_iter_progress(["a", "b"], file=out)) == ["a", "b"]
    assert "2/2" in out.getvalue()
    with pytest.raises(TypeError, match="track_iter_progress: tasks must be a sequence"):
        list(rx.track_iter_progress({1, 2}))
    with pytest.raises(TypeError, match="a tuple of tasks must be"):
        list(rx.track_iter_progress((1, 2, 3)))


@pytest.mark.parametrize("keep_order", [True, False])
@pytest.mark.parametrize("skip_first", [False, True])
def test_track_parallel_progress_matches_mmengine(keep_order, skip_first):
    tasks = list(range(12))
    kwargs = dict(nproc=2, keep_order=keep_order, skip_first=skip_first, chunksize=2)
    ours = rx.track_parallel_progress(square, tasks, file=io.StringIO(), **kwargs)
    theirs = mm.track_parallel_progress(square, tasks, file=io.StringIO(), **kwargs)
    if keep_order:
        assert ours == theirs == [square(t) for t in tasks]
    else:
        assert sorted(ours) == sorted(theirs)


def test_track_parallel_progress_runs_the_initializer_in_each_worker():
    out = io.StringIO()
    results = rx.track_parallel_progress(
        plus_offset, [1, 2, 3], nproc=2, initializer=set_offset, initargs=(100,), file=out
    )
    assert results == [101, 102, 103]
    assert "3/3" in out.getvalue()
    with pytest.raises(TypeError, match="initargs must be a tuple"):
        rx.track_parallel_progress(plus_offset, [1], 1, set_offset, initargs=[100])


def test_init_pool_starts_workers_that_ran_the_initializer():
    from runnerx.utils.progressbar import init_pool

    with init_pool(2, set_offset, (5,)) as pool:
        assert pool.map(plus_offset, [1, 2, 3]) == [6, 7, 8]
    with pytest.raises(TypeError, match="initargs must be a tuple"):
        init_pool(1, set_offset, [5])


@pytest.mark.parametrize("nproc", [1, 2])
def test_track_progress_rich_matches_mmengine(nproc):
    tasks = [(1, 2), (3, 4), 5, [6, 7]]
    ours = rx.track_progress_rich(add, tasks, nproc=nproc)
    assert ours == mm.track_progress_rich(add, tasks, nproc=nproc) == [3, 7, 5, 13]
    assert rx.track_progress_rich(lambda: 1, task_num=3) == [1, 1, 1]
    with pytest.raises(ValueError, match="task_num must be set"):
        rx.track_progress_rich(add, [])
    with pytest.raises(ValueError, match="task_num=2 but there are 4 tasks"):
        rx.track_progress_rich(add, tasks, task_num=2)


def test_progress_bar_counts_and_draws_on_every_file():
    out = io.StringIO()
    bar = rx.ProgressBar(4, file=out)
    assert out.getvalue().startswith("\r[" + " " * 10)  # start() draws the empty bar
    assert bar.task_num == 4 and bar.file is out and bar.terminal_width > 0
    bar.update(4)  # the last update is always drawn
    assert "4/4" in out.getvalue()
    with pytest.raises(ValueError, match="num_tasks must be > 0"):
        bar.update(0)
    unknown = io.StringIO()
    rx.ProgressBar(file=unknown, start=False).update(3)
    assert unknown.getvalue().startswith("\r3, ")


def test_bar_width_is_honoured_and_the_final_line_is_written_once():
    out = io.StringIO()
    bar = rx.ProgressBar(3, bar_width=12, file=out)
    for _ in range(3):
        bar.update()
    bar.close()
    lines = out.getvalue().split("\r")
    assert lines[-1].startswith("[" + ">" * 12 + "] 3/3")
    assert sum(" 3/3," in line for line in lines) == 1  # the full bar is not drawn again
