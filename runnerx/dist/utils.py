"""Rank, world and process-group queries (the names of ``mmengine.dist``) and the per-node
group.

Everything works without an initialised process group: rank 0 of a world of 1, no backend
and no groups. ``group=None`` means the default group. The collectives are in
:mod:`runnerx.dist.collectives`, the device helpers in :mod:`runnerx.dist.device`.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import torch.distributed as torch_dist

from runnerx.utils.errors import ValueAssertionError

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

F = TypeVar("F", bound=Callable[..., Any])

__all__ = [  # the names marked noqa come from other modules of runnerx.dist (__getattr__)
    "barrier",
    "cast_data_device",  # noqa: F822
    "get_backend",
    "get_comm_device",  # noqa: F822
    "get_data_device",  # noqa: F822
    "get_default_group",
    "get_dist_info",
    "get_local_group",
    "get_local_rank",
    "get_local_size",
    "get_rank",
    "get_world_size",
    "infer_launcher",  # noqa: F822
    "init_dist",  # noqa: F822
    "init_local_group",
    "is_distributed",
    "is_main_process",
    "master_only",
]

#: the group of this node's processes, made by init_local_group
_local_group: ProcessGroup | None = None


def is_distributed() -> bool:
    """Whether a default process group is initialised."""
    return torch_dist.is_available() and torch_dist.is_initialized()


def get_default_group() -> ProcessGroup | None:
    """The default process group (None when not distributed; MMEngine raises then)."""
    return torch_dist.group.WORLD if is_distributed() else None


def get_backend(group: ProcessGroup | None = None) -> str | None:
    """The backend of ``group`` (default: the default group) in lower case, such as 'nccl' or
    'gloo'; None when not distributed."""
    return torch_dist.get_backend(group) if is_distributed() else None


def get_rank(group: ProcessGroup | None = None) -> int:
    """This process's rank in ``group`` (default: the default group); 0 when not distributed,
    -1 in a group this process is not part of."""
    return torch_dist.get_rank(group) if is_distributed() else 0


def get_world_size(group: ProcessGroup | None = None) -> int:
    """The number of processes in ``group`` (default: the default group); 1 when not
    distributed."""
    return torch_dist.get_world_size(group) if is_distributed() else 1


def get_dist_info(group: ProcessGroup | None = None) -> tuple[int, int]:
    """``(rank, world_size)`` of this process in ``group``; ``(0, 1)`` when not distributed."""
    return get_rank(group), get_world_size(group)


def get_local_rank() -> int:
    """This process's rank on its node: its rank in the group of :func:`init_local_group`
    once that exists (as in MMEngine), else ``LOCAL_RANK``, which torchrun sets and the
    slurm and mpi launchers of :func:`runnerx.dist.init_dist` set too (MMEngine raises
    without the group); 0 without either."""
    if is_distributed() and _local_group is not None:
        return torch_dist.get_rank(_local_group)
    return int(os.environ.get("LOCAL_RANK", "0"))


def init_local_group(node_rank: int, num_gpus_per_node: int) -> None:
    """Make the group of the processes on this node: ranks ``node_rank * num_gpus_per_node``
    to ``(node_rank + 1) * num_gpus_per_node - 1``, as in MMEngine. Every rank must call it,
    once; :func:`get_local_group` and :func:`get_local_size` then answer from it. Nothing to
    do when not distributed.

    Unlike MMEngine's, every rank takes part in creating every node's group, in the same
    order, which torch.distributed requires of ``new_group`` (MMEngine's creates only its
    own node's group, which can hang with several nodes).
    """
    global _local_group
    if not is_distributed():
        return
    if _local_group is not None:
        raise RuntimeError("init_local_group was called already: the local group exists")
    if not isinstance(num_gpus_per_node, int) or num_gpus_per_node < 1:
        raise ValueAssertionError(
            f"num_gpus_per_node must be a positive int, but got {num_gpus_per_node!r}"
        )
    rank, world_size = get_dist_info()
    if rank // num_gpus_per_node != node_rank:
        raise ValueAssertionError(
            f"node_rank={node_rank!r} does not hold rank {rank}: with num_gpus_per_node="
            f"{num_gpus_per_node} rank {rank} is on node {rank // num_gpus_per_node}"
        )
    for first in range(0, world_size, num_gpus_per_node):
        group = torch_dist.new_group(list(range(first, min(first + num_gpus_per_node, world_size))))
        if first == node_rank * num_gpus_per_node:
            _local_group = group


def get_local_group() -> ProcessGroup | None:
    """The group of this node's processes made by :func:`init_local_group` (None when not
    distributed)."""
    if not is_distributed():
        return None
    if _local_group is None:
        raise RuntimeError(
            "the local process group is not created: call "
            "runnerx.dist.init_local_group(node_rank, num_gpus_per_node) on every rank first"
        )
    return _local_group


def get_local_size() -> int:
    """The number of processes on this node: the size of the group of
    :func:`init_local_group`, else torchrun's ``LOCAL_WORLD_SIZE``; 1 when not distributed."""
    if not is_distributed():
        return 1
    if _local_group is None and "LOCAL_WORLD_SIZE" in os.environ:
        return int(os.environ["LOCAL_WORLD_SIZE"])
    return torch_dist.get_world_size(get_local_group())


def is_main_process(group: ProcessGroup | None = None) -> bool:
    """Whether this process is rank 0 of ``group`` (default: the default group)."""
    return get_rank(group) == 0


def master_only(func: F) -> F:
    """Decorate a function so that only rank 0 runs it (other ranks get None)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs) if is_main_process() else None

    return wrapper  # type: ignore[return-value]


def barrier(group: ProcessGroup | None = None) -> None:
    """Wait for every rank of ``group`` (default: the default group); no-op when not
    distributed."""
    if is_distributed():
        torch_dist.barrier(group)


#: names MMEngine's ``mmengine.dist.utils`` also holds, and the module of runnerx.dist they
#: live in (imported when asked for: that module imports this one)
_ELSEWHERE = {
    "cast_data_device": "device",
    "get_comm_device": "device",
    "get_data_device": "device",
    "infer_launcher": "launch",
    "init_dist": "launch",
}


def __getattr__(name: str) -> Any:
    """``from runnerx.dist.utils import init_dist`` (and the other names of
    ``_ELSEWHERE``) works as ``from mmengine.dist.utils import init_dist`` does."""
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(f".{_ELSEWHERE[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
