"""Distributed helpers with ``mmengine.dist``'s names: rank/world and group queries (utils),
collectives (collectives, results), device helpers (device) and starting a job (launch).

Code written against ``mmengine.dist`` runs with its imports changed to ``runnerx.dist``;
in one process every function works without a process group.
"""

from .collectives import (
    all_gather,
    all_gather_object,
    all_reduce,
    all_reduce_dict,
    all_reduce_params,
    average_tensors,
    broadcast,
    broadcast_object,
    from_rank_zero,
    broadcast_object_list,
    gather,
    gather_object,
    sync_random_seed,
)
from .device import cast_data_device, get_comm_device, get_data_device
from .launch import infer_launcher, init_dist
from .results import collect_results, collect_results_cpu, collect_results_gpu
from .utils import (
    barrier,
    get_backend,
    get_default_group,
    get_dist_info,
    get_local_group,
    get_local_rank,
    get_local_size,
    get_rank,
    get_world_size,
    init_local_group,
    is_distributed,
    is_main_process,
    master_only,
)

__all__ = [
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "all_reduce_dict",
    "all_reduce_params",
    "average_tensors",
    "barrier",
    "broadcast",
    "broadcast_object",
    "from_rank_zero",
    "broadcast_object_list",
    "cast_data_device",
    "collect_results",
    "collect_results_cpu",
    "collect_results_gpu",
    "gather",
    "gather_object",
    "get_backend",
    "get_comm_device",
    "get_data_device",
    "get_default_group",
    "get_dist_info",
    "get_local_group",
    "get_local_rank",
    "get_local_size",
    "get_rank",
    "get_world_size",
    "infer_launcher",
    "init_dist",
    "init_local_group",
    "is_distributed",
    "is_main_process",
    "master_only",
    "sync_random_seed",
]
