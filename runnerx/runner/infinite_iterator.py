"""MMEngine's ``_InfiniteDataloaderIterator``, for custom loops that import it from
``runnerx.runner.loops`` (mmagic's, and iteration-based loops written for MMEngine).

runnerx's own :class:`~runnerx.runner.loops.IterBasedTrainLoop` does not use it: its
``dataloader_iterator`` already continues with the next pass, resumably.

.. code-block:: python

    from runnerx.runner.loops import _InfiniteDataloaderIterator

    batches = _InfiniteDataloaderIterator(dataloader)
    for _ in range(max_iters):
        data_batch = next(batches)     # the next pass starts when one ends
"""

from __future__ import annotations

import logging
from typing import Any

from runnerx.data.samplers.generators import ordering_sampler
from runnerx.logging.logger import print_log


class _InfiniteDataloaderIterator:
    """Batches of ``dataloader`` without end: when a pass ends, the sampler (or the batch
    sampler's sampler) gets ``set_epoch`` of the next pass, for a new order, and a new pass
    begins. A dataloader with ``InfiniteSampler`` never ends a pass and is cheaper: each new
    pass restarts the dataloader's worker processes."""

    def __init__(self, dataloader: Any) -> None:
        self._dataloader = dataloader
        self._iterator = iter(dataloader)
        self._epoch = 0

    def __iter__(self) -> _InfiniteDataloaderIterator:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._iterator)
        except StopIteration:
            pass
        print_log(
            "The dataloader reached its end and restarts; an InfiniteSampler "
            "(train_dataloader.sampler=dict(type='InfiniteSampler')) avoids the restart",
            logger="current",
            level=logging.WARNING,
        )
        self._epoch += 1
        sampler = ordering_sampler(self._dataloader)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(self._epoch)
        self._iterator = iter(self._dataloader)
        return next(self._iterator)  # an empty dataloader ends here, with StopIteration
