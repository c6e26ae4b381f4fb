"""MMEngine's ``mmengine.dist.dist`` path: the collectives (:mod:`runnerx.dist.collectives`)
and the result gathering (:mod:`runnerx.dist.results`), for code that imports them from there.

.. code-block:: python

    from runnerx.dist.dist import all_reduce, collect_results, sync_random_seed
"""

from .collectives import (
    all_gather,
    all_gather_object,
    all_reduce,
    all_reduce_dict,
    all_reduce_params,
    broadcast,
    broadcast_object_list,
    gather,
    gather_object,
    sync_random_seed,
)
from .results import collect_results, collect_results_cpu, collect_results_gpu

__all__ = [
    "all_gather",
    "all_gather_object",
    "all_reduce",
    "all_reduce_dict",
    "all_reduce_params",
    "broadcast",
    "broadcast_object_list",
    "collect_results",
    "collect_results_cpu",
    "collect_results_gpu",
    "gather",
    "gather_object",
    "sync_random_seed",
]
