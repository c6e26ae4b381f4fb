"""Rank and world helpers and the collectives the rest of runnerx uses.

Everything works without an initialised process group: rank 0 of a world of 1, and the
collectives return their input. All rank/world logic of runnerx goes through this module.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from itertools import zip_longest
from typing import Any, TypeVar

import torch
import torch.distributed as torch_dist

F = TypeVar("F", bound=Callable[..., Any])
_MISSING = object()


def is_distributed() -> bool:
    """Whether a default process group is initialised."""
    return torch_dist.is_available() and torch_dist.is_initialized()


def get_rank() -> int:
    """This process's rank in the default group (0 when not distributed)."""
    return torch_dist.get_rank() if is_distributed() else 0


def get_world_size() -> int:
    """The number of processes in the default group (1 when not distributed)."""
    return torch_dist.get_world_size() if is_distributed() else 1


def get_local_rank() -> int:
    """This process's rank on its node (``LOCAL_RANK`` as set by torchrun; 0 otherwise)."""
    return int(os.environ.get("LOCAL_RANK", "0"))


def is_main_process() -> bool:
    """Whether this process is rank 0."""
    return get_rank() == 0


def master_only(function: F) -> F:
    """Decorate a function so that only rank 0 runs it (other ranks get None)."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs) if is_main_process() else None

    return wrapper  # type: ignore[return-value]


def barrier() -> None:
    """Wait for every rank (no-op when not distributed)."""
    if is_distributed():
        torch_dist.barrier()


def _backend_device() -> torch.device:
    if is_distributed() and torch_dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce(tensor: torch.Tensor, op: str = "sum") -> torch.Tensor:
    """Reduce ``tensor`` over all ranks in place (``op``: 'sum' or 'mean'; the mean of an
    integer tensor is rounded toward zero) and return it."""
    if not is_distributed():
        return tensor
    if op not in ("sum", "mean"):
        raise ValueError(f"all_reduce op must be 'sum' or 'mean', got {op!r}")
    original_device = tensor.device
    work = tensor.to(_backend_device())
    torch_dist.all_reduce(work, op=torch_dist.ReduceOp.SUM)
    if op == "mean" and (work.is_floating_point() or work.is_complex()):
        work /= get_world_size()
    elif op == "mean":  # integers stay integers: the mean rounded toward zero
        work.copy_(torch.div(work, get_world_size(), rounding_mode="trunc"))
    if work is not tensor:
        tensor.copy_(work.to(original_device))
    return tensor


@torch.no_grad()
def average_tensors(tensors: Iterable[torch.Tensor]) -> None:
    """Replace each tensor by its mean over all ranks, in place (nothing in one process), in
    one collective per dtype and device, flattened together: e.g. a model's buffers.

    Integer tensors (BatchNorm's ``num_batches_tracked``) keep their dtype, the mean rounded
    toward zero as MMEngine's ``all_reduce_params`` leaves it; bool tensors stay True only
    where every rank has True.
    """
    world_size = get_world_size()
    if world_size == 1:
        return
    groups: dict[tuple[torch.dtype, torch.device], list[torch.Tensor]] = {}
    for tensor in tensors:
        groups.setdefault((tensor.dtype, tensor.device), []).append(tensor)
    for (dtype, _), group in groups.items():
        flat = torch.cat([tensor.reshape(-1) for tensor in group])
        if dtype == torch.bool:
            flat = flat.to(torch.int32)  # summing bools over ranks needs a counting type
        all_reduce(flat, op="mean")
        for tensor, mean in zip(group, flat.split([t.numel() for t in group]), strict=True):
            tensor.copy_(mean.view_as(tensor))


def broadcast_object(obj: Any, src: int = 0) -> Any:
    """Rank ``src``'s ``obj`` on every rank (any picklable object)."""
    if not is_distributed():
        return obj
    holder = [obj if get_rank() == src else None]
    torch_dist.broadcast_object_list(holder, src=src, device=_backend_device())
    return holder[0]


def all_gather_object(obj: Any) -> list[Any]:
    """Every rank's ``obj``, in rank order, on every rank."""
    if not is_distributed():
        return [obj]
    gathered: list[Any] = [None] * get_world_size()
    torch_dist.all_gather_object(gathered, obj)
    return gathered


def collect_results(results: list, size: int) -> list | None:
    """Gather each rank's list of per-sample results into dataset order, on rank 0.

    Samplers give rank r the samples r, r + world, r + 2 * world, ..., so the lists are
    interleaved back and cut to ``size`` (dropping the padding a sampler adds to make
    ranks even). Ranks other than 0 get None.
    """
    if not is_distributed():
        return list(results[:size])
    gathered = all_gather_object(results)
    if not is_main_process():
        return None
    interleaved = zip_longest(*gathered, fillvalue=_MISSING)
    return [item for group in interleaved for item in group if item is not _MISSING][:size]
