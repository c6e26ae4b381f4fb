"""Distributed helpers: rank/world queries and collectives (launchers come in dist/launch)."""

from .utils import (
    all_gather_object,
    all_reduce,
    average_tensors,
    barrier,
    broadcast_object,
    collect_results,
    get_local_rank,
    get_rank,
    get_world_size,
    is_distributed,
    is_main_process,
    master_only,
)

__all__ = [
    "all_gather_object",
    "all_reduce",
    "average_tensors",
    "barrier",
    "broadcast_object",
    "collect_results",
    "get_local_rank",
    "get_rank",
    "get_world_size",
    "is_distributed",
    "is_main_process",
    "master_only",
]
