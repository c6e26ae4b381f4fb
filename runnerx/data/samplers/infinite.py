"""InfiniteSampler: an endless stream of the dataset, split over the ranks, resumable."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized

from runnerx.data.samplers.base import ResumableSampler
from runnerx.registry import DATA_SAMPLERS


@DATA_SAMPLERS.register_module()
class InfiniteSampler(ResumableSampler):
    """The sampler of iteration-based training: it never stops.

    The stream is pass after pass over the dataset, each pass a new order (a permutation
    seeded with ``seed + pass`` when ``shuffle``); rank ``r`` takes the stream's samples
    ``r, r + world_size, r + 2 * world_size, ...``, so together the ranks see every sample
    once per pass. ``seed=None`` draws one seed on rank 0 for all ranks::

        train_dataloader = dict(sampler=dict(type='InfiniteSampler', shuffle=True), ...)

    As in MMEngine, a new iteration continues the stream where the last one stopped; the
    state's ``consumed`` counts the samples this rank has taken from the stream (the pass
    follows from it). ``sampler.size`` is the dataset's length, as in MMEngine, but
    ``len(sampler)`` is this rank's share of one pass, as for DefaultSampler: MMEngine's is
    the dataset's length, which under N ranks makes a "one pass" ``len(dataloader)`` N passes.
    """

    def __init__(
        self,
        dataset: Sized,
        shuffle: bool = True,
        seed: int | None = None,
        *,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        super().__init__(dataset, shuffle, seed, rank=rank, world_size=world_size)
        if self.dataset_size == 0:
            raise ValueError("InfiniteSampler needs a non-empty dataset")

    def __iter__(self) -> Iterator[int]:
        stream_position = self.rank + self._consumed * self.world_size
        while True:
            pass_index, offset = divmod(stream_position, self.dataset_size)
            indices = self._permutation(pass_index)[offset :: self.world_size].tolist()
            for index in indices:
                self._consumed += 1
                yield index
            stream_position += len(indices) * self.world_size

    @property
    def size(self) -> int:
        """The dataset's length (MMEngine's attribute)."""
        return self.dataset_size

    def __len__(self) -> int:
        return math.ceil(self.dataset_size / self.world_size)

    def set_epoch(self, epoch: int) -> None:
        """Does nothing: the stream has no epochs (kept for loops and hooks that call it)."""
