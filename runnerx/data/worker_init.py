"""Seeding of dataloader worker processes, so that random augmentations repeat run to run
and differ from epoch to epoch.

Two levels: :func:`worker_init_fn` seeds each worker when it starts (MMEngine's scheme), and
:class:`WorkerSeededLoader` reseeds a worker before every batch it reads, from the batch's
place in the data (seed, epoch, rank, samples consumed). With the second, a batch's random
augmentation no longer depends on which worker reads it, on ``num_workers``, on
``persistent_workers`` or on where a run was resumed, so resumed runs draw exactly what an
unbroken run draws.

:class:`LeaveSignalsToMain` wraps a ``worker_init_fn`` so that the workers leave the stop
signals of :class:`~runnerx.hooks.PreemptionHook` to the main process.
"""

from __future__ import annotations

import os
import random
import signal
import threading
import warnings
from collections.abc import Iterator
from typing import Any, SupportsInt

import torch
from torch.utils.data import DataLoader, IterableDataset, get_worker_info


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: SupportsInt,
    disable_subprocess_warning: bool = False,
    epoch: SupportsInt = 0,
    world_size: int = 1,
) -> None:
    """Seed Python's ``random``, numpy and torch in a dataloader worker.

    The seed is ``seed + (epoch * world_size + rank) * num_workers + worker_id``: different
    for every worker of every rank in every epoch, the same from one run to the next. In
    epoch 0 it is MMEngine's ``seed + num_workers * rank + worker_id``, and so it is for
    MMEngine's four arguments. ``build_dataloader`` binds ``seed`` and ``epoch`` to the
    sampler's (:class:`SamplerValue`), read when the workers start, so workers started anew
    each epoch draw new augmentations, and a run resumed at an epoch boundary (whose sampler
    takes the checkpoint's seed) draws what an unbroken run would.
    ``disable_subprocess_warning`` silences warnings in all workers but the first.
    """
    seed_process(int(seed) + (int(epoch) * world_size + rank) * num_workers + worker_id)
    if disable_subprocess_warning and worker_id != 0:
        warnings.simplefilter("ignore")


def seed_process(seed: int) -> None:
    """Seed Python's ``random``, numpy's global generator and torch in this process."""
    random.seed(seed)
    try:  # numpy is optional for torch, and so for runnerx
        import numpy as np
    except ImportError:
        pass
    else:
        np.random.seed(seed % 2**32)  # numpy takes seeds below 2**32 only
    torch.manual_seed(seed)


class LeaveSignalsToMain:
    """A DataLoader ``worker_init_fn`` that makes each worker ignore ``signals`` (numbers)
    sent by any process but the main one, then calls ``init_fn`` (None: nothing more).

    A scheduler signals every process of a job, workers included; the main process saves a
    checkpoint and stops at the next iteration boundary, and meanwhile its workers must keep
    serving batches. torch's workers install a C handler for SIGTERM that ends a worker
    (``DataLoader worker ... is killed by signal``) unless the sender is its parent, before
    they call ``worker_init_fn``; this undoes it. A SIGTERM from the main process (the
    DataLoader's or multiprocessing's ``terminate()`` at shutdown) still ends the worker at
    once, and a worker still ends when the main process dies (torch's watchdog). Picklable
    when ``init_fn`` is, for workers started by spawn or forkserver.
    """

    def __init__(self, init_fn: Any, signals: Any) -> None:
        self.init_fn = init_fn
        self.signals = tuple(sorted(int(number) for number in signals))
        self.main_pid = os.getpid()

    def __call__(self, worker_id: int) -> None:
        leave_signals_to_main(self.signals, self.main_pid)
        if self.init_fn is not None:
            self.init_fn(worker_id)

    def __repr__(self) -> str:
        return f"LeaveSignalsToMain({self.init_fn!r}, signals={list(self.signals)})"


def leave_signals_to_main(signals: Any, main_pid: int) -> None:
    """In a worker process: block ``signals`` and take them in a thread of their own, which
    drops them, except a SIGTERM from ``main_pid``, which ends the process as torch's handler
    does. Python handlers get no sender, so the thread waits with ``sigwaitinfo`` (absent on
    macOS and Windows, where torch's handlers stay)."""
    if not signals or not hasattr(signal, "sigwaitinfo"):
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)  # threads started later inherit it
    waiter = threading.Thread(
        target=_drop_signals, args=(set(signals), main_pid), name="runnerx_signals", daemon=True
    )
    waiter.start()


def _drop_signals(signals: set[int], main_pid: int) -> None:
    while True:
        info = signal.sigwaitinfo(signals)
        if info.si_signo == signal.SIGTERM and info.si_pid == main_pid:
            os._exit(0)


class SeededBatch(list):
    """The indices of one batch, with the seed a worker process takes before reading them
    (when a worker iterates them; in the main process nothing is seeded)."""

    def __init__(self, indices: Any, seed: int) -> None:
        super().__init__(indices)
        self.seed = seed

    def __iter__(self) -> Iterator[Any]:
        if get_worker_info() is not None:
            seed_process(self.seed)
        return super().__iter__()

    def __reduce__(self) -> tuple:
        return SeededBatch, (list(self), self.seed)


class _SeededBatches:
    """A batch sampler's batches as :class:`SeededBatch`; each seed is a function of the
    sampler's seed and epoch, the rank and how many samples the sampler had yielded after the
    batch (its own count for runnerx's samplers, else the batch's number in the pass)."""

    def __init__(self, batch_sampler: Any, rank: int) -> None:
        self.batch_sampler = batch_sampler
        self.rank = rank

    def __len__(self) -> int:
        return len(self.batch_sampler)

    def __iter__(self) -> Iterator[SeededBatch]:
        sampler = getattr(self.batch_sampler, "sampler", None)
        seed = getattr(sampler, "seed", 0)
        epoch = getattr(sampler, "epoch", 0)
        for number, batch in enumerate(self.batch_sampler):
            place = getattr(sampler, "consumed", number)
            # a tuple of ints hashes the same in every process and run
            yield SeededBatch(batch, hash((seed, epoch, self.rank, place)) % 2**63)


class WorkerSeededLoader(DataLoader):
    """A DataLoader whose worker processes reseed before every batch (see the module
    docstring); ``build_dataloader`` makes one for map-style datasets read by workers when
    the run has a seed and the config names no ``worker_init_fn``. ``batch_size``,
    ``sampler`` and the rest are a DataLoader's."""

    def __init__(self, *args: Any, rank: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seed_rank = rank

    @property
    def _index_sampler(self) -> Any:
        if self._auto_collation and not isinstance(self.dataset, IterableDataset):
            return _SeededBatches(self.batch_sampler, self.seed_rank)
        return super()._index_sampler


class SamplerValue:
    """A sampler's ``name`` attribute (``'epoch'``, ``'seed'``; ``default`` without one), read
    when asked.

    Bound into the workers' init function: forked workers read it from the sampler they
    inherit; for workers started by spawn or forkserver it pickles as the plain number it is
    at that moment, so the sampler (and its dataset) is not pickled with it.
    """

    def __init__(self, sampler: Any, name: str, default: int) -> None:
        self._sampler = sampler
        self._name = name
        self._default = default

    def __int__(self) -> int:
        return int(getattr(self._sampler, self._name, self._default))

    def __reduce__(self) -> tuple:
        return int, (int(self),)

    def __repr__(self) -> str:
        return f"SamplerValue({self._name}={int(self)})"
