"""The training data's position in a checkpoint, and where a resumed run continues from it.

A training loop saves :func:`data_position` in every checkpoint (its ``dataloader`` entry)::

    {'epoch': 1, 'batches': 7, 'consumed': 448, 'seed': 0, 'shuffle': True,
     'batch_size': 64, 'world_size': 1, 'dataset_len': 1438}

and a resumed loop asks :func:`batches_to_skip` how many batches of that pass to skip. With
the batch size, the number of ranks, the dataset's length and the sampler's ``shuffle`` of
the checkpoint, that is the saved ``batches``; when the batch size or the number of ranks
changed, it is worked out from the samples already seen; when the order is another one, the
pass starts over; the loop logs why.
"""

from __future__ import annotations

from typing import Any

from runnerx.data.build import length_of
from runnerx.dist import get_world_size

from .infinite import InfiniteSampler

__all__ = ["batches_to_skip", "data_position"]

_NAMES = {"batch_size": "train_dataloader.batch_size", "world_size": "the world size"}
#: What decides the sampler's order besides its seed, and how a change of it is told.
_ORDER = {
    "dataset_len": lambda was, now: f"the training set had {was} samples and has {now} now",
    "shuffle": lambda was, now: (
        f"train_dataloader.sampler.shuffle was {was} in the checkpoint and is {now} now"
    ),
}


def data_position(dataloader: Any, sampler: Any, data_pass: int, batches: int) -> dict:
    """Where the training data stands ``batches`` batches into pass (sampler epoch)
    ``data_pass``: the pass, the batches and the samples per rank consumed of it, the
    sampler's seed and ``shuffle`` (when it has them), and the batch size, world size and
    dataset length it is read with (what a resume compares)."""
    shape = _data_shape(dataloader, sampler)
    position = {"epoch": data_pass, "batches": batches, "consumed": batches * shape["batch_size"]}
    seed = getattr(sampler, "seed", None)
    if isinstance(seed, int):
        position["seed"] = seed
    return {**position, **shape}


def batches_to_skip(
    position: dict, dataloader: Any, sampler: Any, where: str
) -> tuple[int, str | None]:
    """The batches a resumed run skips of the pass a saved ``position`` (a
    :func:`data_position` of the pass being resumed, named ``where`` in the log, e.g.
    ``'epoch 2'``) was taken in, and the warning to log, if any. Older runnerx checkpoints
    lack the last keys (``shuffle``, or all four): they count as unchanged (the batch size is
    ``consumed`` over ``batches``).

    Nothing changed: the saved ``batches``, no warning. The dataset's length or the
    sampler's ``shuffle`` changed: 0 (the pass starts over), since the sampler orders the
    whole dataset by a permutation that depends on both, so the samples already seen are not
    the first ones of the new order. The batch size or the world size changed: the batches
    that fit in the samples already seen, rounded down. What "already seen" means:
    ``DefaultSampler`` orders the whole dataset (seeded with seed + epoch, padded by
    repeating it to a multiple of the world size) and rank ``r`` of ``W`` takes its places
    ``r, r + W, r + 2W, ...``; after every rank has taken ``consumed`` samples, the ranks
    together have seen exactly the first ``consumed * W`` places of that order
    (``InfiniteSampler`` deals its endless stream the same way). The order depends on
    neither the world size nor the batch size, so with ``W'`` ranks of batch size ``B'``,
    skipping ``k`` batches on every rank continues after the first ``k * B' * W'`` places:
    ``k`` is the largest that does not pass ``consumed * W``. Nothing unseen is skipped;
    fewer than ``B' * W'`` samples are read a second time.
    """
    saved = int(position.get("batches", 0))
    now = _data_shape(dataloader, sampler)
    if not saved or not now["batch_size"]:
        return saved, None
    before = {
        **now,
        "batch_size": int(position.get("consumed", 0)) // saved or now["batch_size"],
        **{key: position[key] for key in ("batch_size", "world_size", *_ORDER) if key in position},
    }
    endless = isinstance(sampler, InfiniteSampler)
    where = "the training data stream" if endless else where
    new_order = [
        describe(before[key], now[key])
        for key, describe in _ORDER.items()
        if key in now and before[key] != now[key]
    ]
    if new_order:
        return 0, (
            f"resume: {', and '.join(new_order)}: {where} starts over (the sampler's order is "
            "another one)"
        )
    changed = [
        f"{name} was {before[key]} in the checkpoint and is {now[key]} now"
        for key, name in _NAMES.items()
        if before[key] != now[key]
    ]
    if not changed:
        return saved, None
    seen = saved * before["batch_size"] * before["world_size"]
    per_batch = now["batch_size"] * now["world_size"]
    total = None if endless else length_of(dataloader)
    skip = seen // per_batch if total is None else min(seen // per_batch, total)
    again = max(seen - skip * per_batch, 0)
    by = " by all ranks" if max(before["world_size"], now["world_size"]) > 1 else ""
    at = f"batch {skip}" + ("" if total is None else f" of {total}")
    if again > 0:
        after = f"{seen - again} of the {seen} samples already seen{by} ({at}; the other "
        after += f"{again} are read again)"
    else:
        after = f"the {seen} samples already seen{by} ({at})"
    return skip, f"resume: {', and '.join(changed)}; {where} continues after {after}"


def _data_shape(dataloader: Any, sampler: Any) -> dict:
    """The batch size (per rank), world size, dataset length and the sampler's ``shuffle``
    the data is read with (the length left out when the dataset has none, ``shuffle`` when
    the sampler has none)."""
    shape = {
        "batch_size": getattr(dataloader, "batch_size", None) or 0,
        "world_size": getattr(sampler, "world_size", None) or get_world_size(),
    }
    shuffle = getattr(sampler, "shuffle", None)
    if isinstance(shuffle, bool):
        shape["shuffle"] = shuffle
    try:
        shape["dataset_len"] = len(dataloader.dataset)
    except (AttributeError, TypeError):  # an iterable dataset has no length
        pass
    return shape
