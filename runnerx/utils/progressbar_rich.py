"""``track_progress_rich``: MMEngine's task runner with a `rich <https://github.com/Textualize/rich>`_
progress bar (rich is imported on use and must be installed)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from typing import Any

__all__ = ["track_progress_rich"]


class _CallWithIndex:
    """Calls ``func`` on one task (a tuple or list is spread into arguments) and returns the
    result with the task's index, so that results from a pool can be put back in order."""

    def __init__(self, func: Callable) -> None:
        self.func = func

    def __call__(self, indexed_task: tuple[Any, int]) -> tuple[Any, int]:
        task, index = indexed_task
        arguments = task if isinstance(task, (tuple, list)) else (task,)
        return self.func(*arguments), index


def track_progress_rich(
    func: Callable,
    tasks: Iterable = (),
    task_num: int | None = None,
    nproc: int = 1,
    chunksize: int = 1,
    description: str = "Processing",
    color: str = "blue",
) -> list:
    """``func`` applied to each task, in order, with a rich progress bar; in a pool of
    ``nproc`` processes when ``nproc > 1``.

    A task that is a tuple or a list is spread into ``func``'s arguments, any other task is
    passed as the one argument. For a ``func`` without arguments pass ``tasks=()`` and
    ``task_num``; for an iterator without a length, ``task_num`` gives the bar its total.

    .. code-block:: python

        areas = track_progress_rich(lambda w, h: w * h, [(2, 3), (4, 5)])   # [6, 20]
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    if not callable(func):
        raise TypeError(f"track_progress_rich: func must be callable, got {func!r}")
    if not isinstance(tasks, Iterable):
        raise TypeError(f"track_progress_rich: tasks must be iterable, got {type(tasks).__name__}")
    if isinstance(tasks, Sized):
        if len(tasks) == 0:
            if task_num is None:
                raise ValueError("track_progress_rich: tasks is empty, so task_num must be set")
            tasks = [()] * task_num
        elif task_num is not None and task_num != len(tasks):
            raise ValueError(
                f"track_progress_rich: task_num={task_num} but there are {len(tasks)} tasks"
            )
        task_num = len(tasks)
    if nproc <= 0:
        raise ValueError(f"track_progress_rich: nproc must be a positive int, got {nproc}")

    worker = _CallWithIndex(func)
    indexed = ((task, index) for index, task in enumerate(tasks))
    columns = (
        TextColumn("{task.description}"),
        BarColumn(complete_style=color),
        TimeRemainingColumn(),
        MofNCompleteColumn(),
        TaskProgressColumn(show_speed=True),
    )
    with Progress(*columns) as progress:
        bar = progress.add_task(description, total=task_num)
        if nproc == 1:
            results = []
            for item in indexed:
                results.append(worker(item)[0])
                progress.update(bar, advance=1, refresh=True)
            return results
        from multiprocessing import Pool

        ordered: dict[int, Any] = {}
        with Pool(nproc) as pool:
            for result, index in pool.imap_unordered(worker, indexed, chunksize):
                ordered[index] = result
                progress.update(bar, advance=1, refresh=True)
        return [ordered[index] for index in range(len(ordered))]
