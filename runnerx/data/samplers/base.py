"""What the built-in samplers share: rank and world, a seed every rank agrees on, and a
resumable position (how many samples this rank has yielded)."""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sized
from typing import Any

import torch
from torch.utils.data import Sampler

from runnerx.dist import get_rank, get_world_size, sync_random_seed


class ResumableSampler(Sampler[int]):
    """Base of the samplers: resolves rank and world size, agrees on a seed and keeps the
    position this rank has reached, so that a run can continue with the next unseen sample.

    ``consumed`` counts the samples this rank has yielded (of the current epoch for
    :class:`DefaultSampler`, of the whole stream for :class:`InfiniteSampler`).
    ``state_dict()`` saves it with the seed; ``load_state_dict(state)`` or
    ``set_consumed(n)`` put a sampler back at that position.
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
        self.dataset = dataset
        self.shuffle = shuffle
        self.world_size = get_world_size() if world_size is None else world_size
        self.rank = get_rank() if rank is None else rank
        if not isinstance(self.world_size, int) or self.world_size < 1:
            raise ValueError(f"world_size must be a positive int, but got {self.world_size!r}")
        if not isinstance(self.rank, int) or not 0 <= self.rank < self.world_size:
            raise ValueError(
                f"rank must be an int in [0, {self.world_size}) for world_size="
                f"{self.world_size}, but got {self.rank!r}"
            )
        self.seed = _check_seed(sync_random_seed() if seed is None else seed)
        self.dataset_size = len(dataset)
        self._consumed = 0

    @property
    def consumed(self) -> int:
        """How many samples this rank has yielded (see the class docstring)."""
        return self._consumed

    def _permutation(self, offset: int) -> torch.Tensor:
        """The dataset's indices in the order of epoch (or pass) ``offset``."""
        if not self.shuffle:
            return torch.arange(self.dataset_size)
        generator = torch.Generator()
        generator.manual_seed(self.seed + offset)
        return torch.randperm(self.dataset_size, generator=generator)

    def set_consumed(self, num_samples: int) -> None:
        """Make the next iteration start after the first ``num_samples`` samples this rank
        yields (of the current epoch, or of the stream)."""
        if not isinstance(num_samples, int) or num_samples < 0:
            raise ValueError(f"set_consumed expects a non-negative int, but got {num_samples!r}")
        self._consumed = num_samples

    def state_dict(self) -> dict[str, Any]:
        """The seed and this rank's position; what :meth:`load_state_dict` restores."""
        return dict(seed=self.seed, consumed=self._consumed, world_size=self.world_size)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Continue from a saved :meth:`state_dict`: the next sample is the first unseen one.

        A state saved with another world size is converted through the number of samples
        all ranks had consumed together; that is exact when it divides by the new world size.
        """
        missing = [key for key in self.state_dict() if key not in state]
        if missing:
            raise KeyError(
                f"{type(self).__name__}.load_state_dict: the state lacks {missing} "
                f"(it has {sorted(state)})"
            )
        self.seed = _check_seed(state["seed"])
        consumed, saved_world = state["consumed"], state["world_size"]
        if saved_world != self.world_size:
            consumed, left_over = divmod(consumed * saved_world, self.world_size)
            if left_over:
                warnings.warn(
                    f"{type(self).__name__}: resuming with world size {self.world_size} from "
                    f"a state saved with {saved_world}; up to {left_over} samples are seen again",
                    stacklevel=2,
                )
        self.set_consumed(consumed)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(dataset_size={self.dataset_size}, shuffle={self.shuffle}, "
            f"seed={self.seed}, rank={self.rank}, world_size={self.world_size})"
        )


def _check_seed(seed: Any) -> int:
    if not isinstance(seed, bool):
        try:
            return operator.index(seed)  # an int, or an integer numpy scalar
        except TypeError:
            pass
    raise TypeError(f"a sampler's seed must be an int or None, but got {seed!r}")
