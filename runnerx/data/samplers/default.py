"""DefaultSampler: one epoch of the dataset, split over the ranks, resumable mid-epoch."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sized
from typing import Any

from runnerx.data.samplers.base import ResumableSampler
from runnerx.registry import DATA_SAMPLERS


@DATA_SAMPLERS.register_module()
class DefaultSampler(ResumableSampler):
    """The sampler of epoch-based training and of evaluation, on one process or many.

    Each epoch orders the dataset (a permutation seeded with ``seed + epoch`` when
    ``shuffle``), pads it by repeating from the start to a multiple of the world size when
    ``round_up`` (so every rank gets the same number of samples), and gives rank ``r`` the
    samples ``r, r + world_size, r + 2 * world_size, ...``. Without ``round_up`` nothing is
    added and the last ranks get one sample fewer. ``seed=None`` draws one seed on rank 0
    for all ranks. ``len(sampler)`` is this rank's number of samples per epoch::

        train_dataloader = dict(sampler=dict(type='DefaultSampler', shuffle=True), ...)

    Every iteration goes through the whole epoch again, unless ``load_state_dict`` or
    ``set_consumed`` set a position: then the next iteration starts there (exact resume).
    ``set_epoch`` with a new epoch starts that epoch from its beginning.
    """

    def __init__(
        self,
        dataset: Sized,
        shuffle: bool = True,
        seed: int | None = None,
        round_up: bool = True,
        *,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        super().__init__(dataset, shuffle, seed, rank=rank, world_size=world_size)
        self.round_up = round_up
        self.epoch = 0
        self._start = 0  # where the next iteration starts; set only to resume
        if round_up:
            self.num_samples = math.ceil(self.dataset_size / self.world_size)
            self.total_size = self.num_samples * self.world_size
        else:
            self.num_samples = len(range(self.rank, self.dataset_size, self.world_size))
            self.total_size = self.dataset_size

    def _indices_of_rank(self) -> list[int]:
        order = self._permutation(self.epoch)
        if self.total_size > self.dataset_size:  # padding repeats the order from its start
            order = order.repeat(math.ceil(self.total_size / self.dataset_size))
        return order[self.rank : self.total_size : self.world_size].tolist()

    def __iter__(self) -> Iterator[int]:
        indices = self._indices_of_rank()
        start, self._start = self._start, 0
        for position in range(start, len(indices)):
            self._consumed = position + 1
            yield indices[position]

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Shuffle for ``epoch`` from now on; a new epoch starts at its first sample."""
        if epoch != self.epoch:
            self.epoch = epoch
            self._start = self._consumed = 0

    def set_consumed(self, num_samples: int) -> None:
        """Make the next iteration skip the first ``num_samples`` samples of this rank's epoch."""
        super().set_consumed(num_samples)
        self._start = num_samples

    def state_dict(self) -> dict[str, Any]:
        """``epoch``, ``seed``, ``consumed`` (samples of this epoch yielded by this rank) and
        ``world_size``."""
        return dict(epoch=self.epoch, **super().state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue the saved epoch after its last yielded sample."""
        super().load_state_dict(state)
        self.epoch = state["epoch"]
