"""Gathering every rank's per-sample results on rank 0, in dataset order (MMEngine's
collect_results, collect_results_cpu and collect_results_gpu).

Samplers give rank r the samples r, r + world, r + 2 * world, ..., so the ranks' lists are
interleaved back and cut to ``size``, which drops the samples a sampler repeats to make the
ranks' shares even. Ranks other than 0 get None; one process gets ``results[:size]``.

Results that are None stay in their place: MMEngine drops them, which shifts every later
result of the dataset to the wrong index.

.. code-block:: python

    from runnerx.dist import collect_results

    predictions = collect_results(my_share, size=len(dataset))   # rank 0: the whole dataset
"""

from __future__ import annotations

import os
import pickle
from itertools import zip_longest

from runnerx.utils.errors import ValueAssertionError, ValueNotImplementedError

from .collectives import all_gather_object, broadcast_object
from .utils import barrier, get_dist_info

_MISSING = object()
_DEVICES = ("cpu", "gpu", "npu")


def _in_dataset_order(parts: list[list], size: int) -> list:
    interleaved = zip_longest(*parts, fillvalue=_MISSING)
    return [item for group in interleaved for item in group if item is not _MISSING][:size]


def collect_results(
    results: list, size: int, device: str = "cpu", tmpdir: str | None = None
) -> list | None:
    """Every rank's ``results`` in dataset order on rank 0 (see the module docstring):
    :func:`collect_results_cpu` for ``device='cpu'``, :func:`collect_results_gpu` for
    'gpu' and 'npu' (which take no ``tmpdir``)."""
    if device not in _DEVICES:
        raise ValueNotImplementedError(
            f"device must be one of {', '.join(_DEVICES)}, but got {device!r}"
        )
    if device == "cpu":
        return collect_results_cpu(results, size, tmpdir)
    if tmpdir is not None:
        raise ValueAssertionError(f"tmpdir must be None when device is {device!r}, got {tmpdir!r}")
    return collect_results_gpu(results, size)


def collect_results_gpu(result_part: list, size: int) -> list | None:
    """Every rank's ``result_part`` in dataset order on rank 0, gathered through the process
    group (on the backend's device: the GPU under nccl)."""
    rank, world_size = get_dist_info()
    if world_size == 1:
        return list(result_part[:size])
    parts = all_gather_object(result_part)
    return _in_dataset_order(parts, size) if rank == 0 else None


def collect_results_cpu(result_part: list, size: int, tmpdir: str | None = None) -> list | None:
    """Every rank's ``result_part`` in dataset order on rank 0, without the GPU when
    ``tmpdir`` is given.

    With ``tmpdir`` (a directory every rank reaches: on several machines, a shared
    filesystem; made if missing) each rank pickles its part there and rank 0 reads them all,
    then deletes them; the directory and anything else in it stay (MMEngine deletes the
    directory). A part that rank 0 cannot find is a FileNotFoundError on every rank. Without
    ``tmpdir`` the parts go through the process group as in :func:`collect_results_gpu`;
    MMEngine writes them to a new directory under ``./.dist_test`` instead, and runnerx does
    not write to the working directory.
    """
    rank, world_size = get_dist_info()
    if world_size == 1:
        return list(result_part[:size])
    if tmpdir is None:
        return collect_results_gpu(result_part, size)
    os.makedirs(tmpdir, exist_ok=True)
    paths = [os.path.join(tmpdir, f"part_{part}.pkl") for part in range(world_size)]
    with open(paths[rank], "wb") as file:
        pickle.dump(result_part, file)
    barrier()
    parts, missing = [], []
    if rank == 0:
        for part, path in enumerate(paths):
            if not os.path.exists(path):
                missing.append(part)
                continue
            with open(path, "rb") as file:  # written by this job's ranks a moment ago
                parts.append(pickle.load(file))
            os.remove(path)
    # Rank 0's list reaches every rank, so that all of them raise below; the broadcast also
    # keeps every rank from writing its next part before rank 0 has read this one.
    missing = broadcast_object(missing)
    if missing:
        raise FileNotFoundError(
            f"rank 0 did not find the results of ranks {missing} in tmpdir={tmpdir!r} (a "
            f"metric's collect_dir; rank {rank}'s path): it must be one directory that every "
            "rank can reach (a shared filesystem across machines), or leave it unset to "
            "gather through the process group"
        )
    return _in_dataset_order(parts, size) if rank == 0 else None
