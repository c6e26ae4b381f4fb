"""MMEngine's ProgressBar and ``track_progress`` / ``track_iter_progress`` /
``track_parallel_progress``: run a function over tasks (in a process pool for the last one)
with a progress bar, for scripts such as dataset converters.

.. code-block:: python

    sizes = track_progress(os.path.getsize, paths)                     # one by one
    sizes = track_parallel_progress(os.path.getsize, paths, nproc=8)   # in 8 processes
    for path in track_iter_progress(paths):
        ...

The bar is drawn by :class:`runnerx.logging.ProgressBar` (the one of the val and test loops).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from runnerx.logging.progress_bar import ProgressBar as _LoopProgressBar
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

if TYPE_CHECKING:
    import multiprocessing.pool

__all__ = [
    "ProgressBar",
    "init_pool",
    "track_iter_progress",
    "track_parallel_progress",
    "track_progress",
]


class ProgressBar(_LoopProgressBar):
    """A progress bar of ``task_num`` tasks (0: unknown) written to ``file`` (``sys.stdout``
    when None) by every process, whether or not ``file`` is a terminal.

    .. code-block:: python

        bar = ProgressBar(len(items))
        for item in items:
            process(item)
            bar.update()

    Unlike the loops' bar it draws to any file, but as that one it redraws at most ten times
    a second; the bar is at most ``bar_width`` characters wide.
    """

    def __init__(
        self, task_num: int = 0, bar_width: int = 50, start: bool = True, file: TextIO | None = None
    ) -> None:
        super().__init__(max(task_num, 0), stream=file)
        self.bar_width = bar_width
        self._enabled = True
        if start:
            self.start()

    @property
    def task_num(self) -> int:
        """The number of tasks (0: unknown)."""
        return self.total

    @property
    def file(self) -> TextIO:
        """Where the bar is written."""
        return self._stream

    @property
    def terminal_width(self) -> int:
        """The width of the terminal, in columns."""
        return shutil.get_terminal_size().columns

    def start(self) -> None:
        """Restart the clock and draw the bar with the tasks done so far."""
        self._start = time.monotonic()
        self._draw(self._start)

    def update(self, num_tasks: int = 1) -> None:
        """Count ``num_tasks`` (> 0) more finished tasks."""
        if num_tasks <= 0:
            raise ValueAssertionError(f"ProgressBar.update: num_tasks must be > 0, got {num_tasks}")
        super().update(num_tasks)


def _tasks_and_count(tasks: Any, caller: str) -> tuple[Iterable, int]:
    """``(tasks, count)`` from MMEngine's ``tasks``: a sequence, or a tuple ``(iterable,
    count)``."""
    if isinstance(tasks, tuple):
        if len(tasks) != 2 or not isinstance(tasks[0], Iterable) or not isinstance(tasks[1], int):
            raise TypeAssertionError(
                f"{caller}: a tuple of tasks must be (an iterable of tasks, their number), "
                f"got a tuple of {len(tasks)} items"
            )
        return tasks[0], tasks[1]
    if isinstance(tasks, Sequence):
        return tasks, len(tasks)
    raise TypeError(
        f"{caller}: tasks must be a sequence or a tuple (iterable, number of tasks), "
        f"got {type(tasks).__name__}"
    )


def track_progress(
    func: Callable,
    tasks: Sequence | tuple[Iterable, int],
    bar_width: int = 50,
    file: TextIO | None = None,
    **kwargs: Any,
) -> list:
    """``[func(task, **kwargs) for task in tasks]`` with a progress bar.

    ``tasks`` is a sequence, or a tuple ``(iterable, number of tasks)`` for an iterable
    without a length.
    """
    tasks, task_num = _tasks_and_count(tasks, "track_progress")
    bar = ProgressBar(task_num, bar_width, file=file)
    results = []
    for task in tasks:
        results.append(func(task, **kwargs))
        bar.update()
    bar.close()
    return results


def track_iter_progress(
    tasks: Sequence | tuple[Iterable, int], bar_width: int = 50, file: TextIO | None = None
) -> Iterator:
    """Yield each task of ``tasks`` (as in :func:`track_progress`), counting it done when the
    loop asks for the next one."""
    tasks, task_num = _tasks_and_count(tasks, "track_iter_progress")
    bar = ProgressBar(task_num, bar_width, file=file)
    for task in tasks:
        yield task
        bar.update()
    bar.close()


def init_pool(
    process_num: int, initializer: Callable | None = None, initargs: tuple | None = None
) -> multiprocessing.pool.Pool:
    """A :class:`multiprocessing.Pool` of ``process_num`` processes, each running
    ``initializer(*initargs)`` first (``initargs`` must be a tuple)."""
    import multiprocessing.pool  # imported on use: it costs start-up time

    if initargs is not None and not isinstance(initargs, tuple):
        raise TypeError(f"init_pool: initargs must be a tuple, got {initargs!r}")
    return multiprocessing.pool.Pool(process_num, initializer, initargs or ())


def track_parallel_progress(
    func: Callable,
    tasks: Sequence | tuple[Iterable, int],
    nproc: int,
    initializer: Callable | None = None,
    initargs: tuple | None = None,
    bar_width: int = 50,
    chunksize: int = 1,
    skip_first: bool = False,
    keep_order: bool = True,
    file: TextIO | None = None,
) -> list:
    """``[func(task) for task in tasks]`` computed in a pool of ``nproc`` processes
    (:class:`multiprocessing.Pool` with ``initializer``, ``initargs`` and ``chunksize``),
    with a progress bar. ``func`` must be picklable (a module-level function).

    ``keep_order=False`` returns the results in the order they finish; ``skip_first`` leaves
    the first ``nproc * chunksize`` results (the workers' start-up) out of the speed and ETA.
    """
    tasks, task_num = _tasks_and_count(tasks, "track_parallel_progress")
    pool = init_pool(nproc, initializer, initargs)
    warm_up = nproc * chunksize if skip_first else 0
    bar = ProgressBar(task_num - warm_up, bar_width, start=not skip_first, file=file)
    results = []
    with pool:
        imap = pool.imap if keep_order else pool.imap_unordered
        for result in imap(func, tasks, chunksize):
            results.append(result)
            if len(results) < warm_up:
                continue
            if len(results) == warm_up:
                bar.start()
            else:
                bar.update()
        pool.close()
        pool.join()
    bar.close()
    return results
