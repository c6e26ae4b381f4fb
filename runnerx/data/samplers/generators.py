"""The random generators that order a DataLoader the user's script built, and their states.

torch's ``DataLoader(dataset, shuffle=True)`` shuffles with a ``RandomSampler`` that draws
each pass's order when the pass starts: from the loader's ``generator=``, else from the global
torch RNG, whose state at that moment no checkpoint holds. The Runner gives such a sampler a
generator of its own (:func:`seed_order_generator`); the training loop notes the generators'
states when a pass starts, the checkpoint's data position keeps them, and a resumed run puts
them back before it reads that pass again (see :mod:`runnerx.runner.train_data`).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakSet

import torch
from torch.utils.data import (
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = [
    "generator_states",
    "has_fixed_order",
    "order_generators",
    "ordering_sampler",
    "seed_order_generator",
    "set_generator_states",
]

# torch's samplers that draw from the global RNG when they have no generator
_DRAWING = (RandomSampler, SubsetRandomSampler, WeightedRandomSampler)
# the samplers seed_order_generator gave a generator
_SEEDED_HERE: WeakSet = WeakSet()
# torch's samplers whose order follows from their own settings (and epoch) alone
_FIXED_ORDER = (SequentialSampler, DistributedSampler)


def ordering_sampler(loader: Any) -> Any:
    """The sampler that orders ``loader``'s samples: its batch sampler's, else its own."""
    sampler = getattr(getattr(loader, "batch_sampler", None), "sampler", None)
    return sampler if sampler is not None else getattr(loader, "sampler", None)


def seed_order_generator(loader: Any, seed: int) -> None:
    """Give a torch sampler of ``loader`` that has no generator (``shuffle=True`` without
    ``generator=``) one seeded with ``seed``, and the loader too when it has none (its
    workers' base seed), the same one, as ``DataLoader(shuffle=True, generator=g)`` shares it:
    the order is as reproducible as before, and its state can be saved. A generator given
    here is seeded anew by each later call (a second Runner given the same DataLoader reads
    the order a first one did, as when it drew from the global RNG the Runner seeds)."""
    sampler = ordering_sampler(loader)
    if not isinstance(sampler, _DRAWING):
        return
    if sampler in _SEEDED_HERE:
        sampler.generator.manual_seed(seed)
        return
    if sampler.generator is not None:  # the user's own: theirs to seed
        return
    sampler.generator = torch.Generator().manual_seed(seed)
    _SEEDED_HERE.add(sampler)
    if getattr(loader, "generator", None) is None:
        loader.generator = sampler.generator


def order_generators(loader: Any) -> list[torch.Generator]:
    """The generators whose states at a pass's start decide ``loader``'s order in that pass:
    its sampler's, and the loader's own (its workers' base seed) when that is another one;
    none when the sampler draws from no generator."""
    own = getattr(ordering_sampler(loader), "generator", None)
    if not isinstance(own, torch.Generator):
        return []
    loaders = getattr(loader, "generator", None)
    return [own] if loaders is own or not isinstance(loaders, torch.Generator) else [own, loaders]


def generator_states(generators: list[torch.Generator]) -> list[torch.Tensor]:
    """The states of ``generators`` (what :func:`set_generator_states` puts back)."""
    return [generator.get_state() for generator in generators]


def set_generator_states(generators: list[torch.Generator], states: list) -> None:
    """Put back the ``states`` of :func:`generator_states` (one for each generator)."""
    for generator, state in zip(generators, states, strict=True):
        generator.set_state(state)


def has_fixed_order(loader: Any) -> bool:
    """Whether ``loader`` reads a pass in an order that follows from its settings and epoch
    alone, whatever the random state: runnerx's samplers (seeded by epoch), torch's ordered
    ones, and an iterable dataset (whose order is its own); not one drawn from a generator,
    nor a sampler of the user's."""
    sampler = ordering_sampler(loader)
    return (
        hasattr(sampler, "set_consumed")
        or isinstance(sampler, _FIXED_ORDER)
        or isinstance(getattr(loader, "dataset", None), IterableDataset)
    )
