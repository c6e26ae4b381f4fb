"""Collectives on tensors and picklable objects, with ``mmengine.dist``'s names, arguments and
results, plus runnerx's own ``broadcast_object`` and ``average_tensors``.

* Without a process group (or in a group of one) each returns its input: the tensor, dict or
  list it was given, or a list holding it for the gathers; nothing needs initialising.
* ``group=None`` is the default group. ``src`` and ``dst`` are global ranks, as in
  torch.distributed.
* Tensors travel on the group's device (:func:`~runnerx.dist.get_comm_device`: the GPU under
  nccl, the CPU under gloo) and come back on the device they came from.
* ``op`` is one of 'sum', 'mean', 'product', 'min', 'max', 'band', 'bor', 'bxor' (any case).
  'mean' is a sum divided by the world size; an integer tensor keeps its dtype, its mean
  rounded toward zero, as MMEngine's is when written back.

.. code-block:: python

    from runnerx.dist import all_reduce, all_gather_object, sync_random_seed

    loss_sum = all_reduce(torch.tensor(3.0), op='sum')   # the same value on every rank
    names = all_gather_object(socket.gethostname())       # every rank's, in rank order
    seed = sync_random_seed()                             # rank 0's draw on every rank
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.distributed as torch_dist

from runnerx.utils.errors import TypeAssertionError

from .device import get_comm_device
from .utils import get_rank, get_world_size

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

_OPS = ("sum", "mean", "product", "min", "max", "band", "bor", "bxor")


def _checked_op(op: str) -> str:
    name = op.lower() if isinstance(op, str) else None
    if name not in _OPS:
        raise ValueError(f"op must be one of {', '.join(_OPS)}, but got {op!r}")
    return name


def _on_comm_device(data: torch.Tensor, group: ProcessGroup | None) -> torch.Tensor:
    """``data``, contiguous, on the device ``group`` communicates from (itself if it is)."""
    return data.to(get_comm_device(group)).contiguous()


def all_reduce(
    data: torch.Tensor, op: str = "sum", group: ProcessGroup | None = None
) -> torch.Tensor:
    """Reduce ``data`` over the ranks of ``group``, in place, and return it (the same
    result on every rank)."""
    name = _checked_op(op)
    world_size = get_world_size(group)
    if world_size == 1:
        return data
    work = _on_comm_device(data, group)
    reduce_op = getattr(torch_dist.ReduceOp, "SUM" if name == "mean" else name.upper())
    torch_dist.all_reduce(work, op=reduce_op, group=group)
    if name == "mean" and (work.is_floating_point() or work.is_complex()):
        work /= world_size
    elif name == "mean":
        work = torch.div(work, world_size, rounding_mode="trunc")
    if work is not data:
        data.copy_(work)
    return data


def _buckets(tensors: list[torch.Tensor], bucket_bytes: int | None) -> Iterator[list[int]]:
    """Indices of ``tensors`` grouped by dtype and device, in chunks of at most
    ``bucket_bytes`` (None: no limit; a larger tensor is a chunk of its own)."""
    by_kind: dict[tuple[torch.dtype, torch.device], list[int]] = {}
    for index, tensor in enumerate(tensors):
        by_kind.setdefault((tensor.dtype, tensor.device), []).append(index)
    for indices in by_kind.values():
        bucket: list[int] = []
        filled = 0
        for index in indices:
            size = tensors[index].numel() * tensors[index].element_size()
            if bucket and bucket_bytes is not None and filled + size > bucket_bytes:
                yield bucket
                bucket, filled = [], 0
            bucket.append(index)
            filled += size
        yield bucket


def _reduced(
    tensors: list[torch.Tensor], op: str, group: ProcessGroup | None, bucket_bytes: int | None
) -> list[torch.Tensor]:
    """New tensors holding the reductions of ``tensors`` (same order, dtypes and shapes),
    one all_reduce per bucket of :func:`_buckets` flattened together."""
    results: list[torch.Tensor] = list(tensors)
    for bucket in _buckets(tensors, bucket_bytes):
        flat = torch.cat([tensors[index].reshape(-1) for index in bucket])
        if flat.dtype == torch.bool:
            # bools cannot be summed: count them (mean: True where every rank has True)
            flat = flat.to(torch.int32)
        all_reduce(flat, op=op, group=group)
        sizes = [tensors[index].numel() for index in bucket]
        for index, value in zip(bucket, flat.split(sizes), strict=True):
            results[index] = value.view(tensors[index].shape).to(tensors[index].dtype)
    return results


@torch.no_grad()
def all_reduce_params(
    params: Iterable[torch.Tensor],
    coalesce: bool = True,
    bucket_size_mb: int = -1,
    op: str = "sum",
    group: ProcessGroup | None = None,
) -> None:
    """Reduce a model's parameters or buffers over the ranks, in place.

    ``coalesce=True`` flattens tensors of one dtype and device together, one collective for
    each (of at most ``bucket_size_mb`` MiB when that is positive); ``coalesce=False`` reduces
    them one by one. Bool tensors are reduced as counts: with 'mean' they stay True only
    where every rank has True, with 'sum' where any has.

    .. code-block:: python

        all_reduce_params(model.buffers(), op='mean')   # e.g. BatchNorm statistics
    """
    name = _checked_op(op)
    if get_world_size(group) == 1:
        return
    tensors = list(params)
    if not coalesce:
        bucket_bytes: int | None = 0  # every tensor in a bucket of its own
    else:
        bucket_bytes = bucket_size_mb * 2**20 if bucket_size_mb > 0 else None
    for tensor, value in zip(tensors, _reduced(tensors, name, group, bucket_bytes), strict=True):
        tensor.copy_(value)


def average_tensors(tensors: Iterable[torch.Tensor]) -> None:
    """Replace each tensor by its mean over all ranks, in place (nothing in one process), in
    one collective per dtype and device: ``all_reduce_params(tensors, op='mean')``. Integer
    tensors (BatchNorm's ``num_batches_tracked``) keep their dtype, the mean rounded toward
    zero as MMEngine's ``all_reduce_params`` leaves it."""
    all_reduce_params(tensors, op="mean")


def all_reduce_dict(
    data: dict[str, torch.Tensor], op: str = "sum", group: ProcessGroup | None = None
) -> dict[str, torch.Tensor]:
    """Reduce every tensor of ``data`` over the ranks and put the results in ``data`` (new
    tensors; the ones it held are left as they were); return it.

    Every rank must hold the same keys with tensors of the same shapes and dtypes; they are
    reduced in sorted key order, one collective per dtype and device. Each value keeps its
    dtype: MMEngine flattens all values into one tensor, so a dict mixing dtypes comes back
    in the promoted one (an int value averaged to a fraction, for example).
    """
    if not isinstance(data, dict):
        raise TypeAssertionError(f"data must be a dict of tensors, but got {type(data).__name__}")
    name = _checked_op(op)
    if get_world_size(group) == 1:
        return data
    for key, value in data.items():
        if not isinstance(value, torch.Tensor):
            raise TypeAssertionError(
                f"data[{key!r}] must be a tensor, but got {type(value).__name__}"
            )
    keys = sorted(data)
    data.update(zip(keys, _reduced([data[key] for key in keys], name, group, None), strict=True))
    return data


def broadcast(data: torch.Tensor, src: int = 0, group: ProcessGroup | None = None) -> torch.Tensor:
    """Copy rank ``src``'s ``data`` into ``data`` on every rank of ``group`` and return it
    (same shape and dtype on every rank)."""
    if get_world_size(group) == 1:
        return data
    work = _on_comm_device(data, group)
    torch_dist.broadcast(work, src=src, group=group)
    if work is not data:
        data.copy_(work)
    return data


def broadcast_object_list(
    data: list[Any], src: int = 0, group: ProcessGroup | None = None
) -> list[Any]:
    """Replace the items of ``data`` by those of rank ``src``'s list (picklable objects; the
    lists have the same length on every rank), in place, and return it."""
    if not isinstance(data, list):
        raise TypeAssertionError(f"data must be a list, but got {type(data).__name__}")
    if get_world_size(group) > 1:
        torch_dist.broadcast_object_list(data, src=src, group=group, device=get_comm_device(group))
    return data


def broadcast_object(obj: Any, src: int = 0, group: ProcessGroup | None = None) -> Any:
    """Rank ``src``'s ``obj`` (any picklable object) on every rank of ``group``."""
    return broadcast_object_list([obj], src=src, group=group)[0]


class _FailedOnRankZero(str):
    """What rank 0 broadcasts instead of a result when computing it raised."""


def from_rank_zero(compute: Callable[[], Any], what: str) -> Any:
    """``compute()``, run on rank 0 only and broadcast to every rank (``compute()`` itself in
    one process). When it raises on rank 0, the other ranks, which wait in the broadcast,
    raise too (a RuntimeError: ``'<what> failed on rank 0: <error>'``) instead of hanging
    until the collective's timeout::

        timestamp = from_rank_zero(lambda: make_run_dir(work_dir), "creating the run's folder")
    """
    if get_world_size() == 1:
        return compute()
    if get_rank() != 0:
        result = broadcast_object(None)
        if isinstance(result, _FailedOnRankZero):
            raise RuntimeError(f"{what} failed on rank 0: {result}")
        return result
    try:
        result = compute()
    except Exception as error:
        broadcast_object(_FailedOnRankZero(f"{type(error).__name__}: {error}"))
        raise
    return broadcast_object(result)


def sync_random_seed(group: ProcessGroup | None = None) -> int:
    """A random seed in [0, 2**31) that every rank of ``group`` shares, e.g. for samplers
    that must shuffle alike. Every rank draws from numpy's global generator (so all of them
    advance it alike), and the draw of the group's first rank wins."""
    seed = int(np.random.randint(2**31))
    if get_world_size(group) == 1:
        return seed
    # MMEngine broadcasts from global rank 0, which fails for a group without it
    first = 0 if group is None else torch_dist.get_global_rank(group, 0)
    return int(broadcast(torch.tensor(seed, dtype=torch.int64), src=first, group=group).item())


def all_gather(data: torch.Tensor, group: ProcessGroup | None = None) -> list[torch.Tensor]:
    """Every rank's ``data`` (same shape and dtype on every rank), in rank order, on every
    rank; ``[data]`` in one process."""
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    work = _on_comm_device(data, group)
    gathered = [torch.empty_like(work) for _ in range(world_size)]
    torch_dist.all_gather(gathered, work, group=group)
    return [tensor.to(data.device) for tensor in gathered]


def gather(
    data: torch.Tensor, dst: int = 0, group: ProcessGroup | None = None
) -> list[torch.Tensor]:
    """Every rank's ``data`` in rank order on rank ``dst``; the other ranks get ``[]``.

    ``dst`` is a global rank, as in torch.distributed (MMEngine compares it with the rank in
    ``group``, which differs in a group without global rank 0).
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    work = _on_comm_device(data, group)
    is_dst = get_rank() == dst
    gathered = [torch.empty_like(work) for _ in range(world_size)] if is_dst else None
    torch_dist.gather(work, gather_list=gathered, dst=dst, group=group)
    return [tensor.to(data.device) for tensor in gathered] if gathered is not None else []


def all_gather_object(data: Any, group: ProcessGroup | None = None) -> list[Any]:
    """Every rank's ``data`` (any picklable object), in rank order, on every rank."""
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    gathered: list[Any] = [None] * world_size
    torch_dist.all_gather_object(gathered, data, group=group)
    return gathered


def gather_object(data: Any, dst: int = 0, group: ProcessGroup | None = None) -> list[Any] | None:
    """Every rank's ``data`` (any picklable object), in rank order, on rank ``dst`` (a global
    rank); the other ranks get None."""
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    gathered: list[Any] | None = [None] * world_size if get_rank() == dst else None
    torch_dist.gather_object(data, gathered, dst=dst, group=group)
    return gathered
