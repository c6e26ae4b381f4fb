"""Where data lives and where a process group communicates (MMEngine's get_data_device,
get_comm_device and cast_data_device), for collectives that move tensors to the backend's
device and back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .utils import get_backend

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup

#: backends that communicate from an accelerator's memory, and that accelerator's torch module
_ACCELERATOR_OF_BACKEND = {
    "nccl": "cuda",
    "smddp": "cuda",
    "xccl": "xpu",
    "hccl": "npu",
    "cncl": "mlu",
    "mccl": "musa",
}


def get_comm_device(group: ProcessGroup | None = None) -> torch.device:
    """The device ``group``'s backend communicates from: this process's current GPU for
    nccl (the NPU for hccl, and so on), the CPU for gloo and mpi and when not distributed."""
    backend = get_backend(group)
    # a backend per device type reads "cpu:gloo,cuda:nccl"; the accelerator's is the one
    for name in (backend or "").split(","):
        kind = _ACCELERATOR_OF_BACKEND.get(name.rpartition(":")[2])
        if kind is not None:
            return torch.device(kind, getattr(torch, kind).current_device())
    return torch.device("cpu")


def get_data_device(data: torch.Tensor | Mapping | Iterable) -> torch.device:
    """The device of a tensor, or of all the tensors in a (nested) dict or sequence.

    Raises ValueError when they are on different devices or there are none, TypeError for
    anything else (a string, a number, an array).
    """
    if isinstance(data, torch.Tensor):
        return data.device
    if isinstance(data, Mapping):
        items: Iterable = data.values()
    elif isinstance(data, Iterable) and not isinstance(data, str):
        items = data
    else:
        raise TypeError(
            f"data should be a tensor, or a sequence or dict of tensors, but got {data!r}"
        )
    devices = {get_data_device(item) for item in items}
    if not devices:
        raise ValueError("data should not be empty: it holds no tensor to take a device from")
    if len(devices) > 1:
        raise ValueError(
            f"the tensors in data should be on one device, but they are on "
            f"{', '.join(sorted(map(str, devices)))}"
        )
    return devices.pop()


def cast_data_device(
    data: torch.Tensor | Mapping | Iterable,
    device: torch.device | str,
    out: torch.Tensor | Mapping | Iterable | None = None,
) -> Any:
    """``data`` (a tensor, or a nested dict or sequence of them) with every tensor on
    ``device``; tensors already there are not copied. Containers keep their type.

    With ``out`` (the same structure as ``data``) the values are also copied into ``out``'s
    tensors, in place: how a collective that ran on the backend's device writes its result
    back into the caller's tensors.

    .. code-block:: python

        batch = cast_data_device({'x': torch.ones(2), 'y': [torch.zeros(1)]}, 'cuda')
    """
    if out is not None:
        if type(out) is not type(data):
            raise TypeError(
                f"out should be of the type of data ({type(data).__name__}), but got "
                f"{type(out).__name__}"
            )
        if isinstance(out, (set, frozenset)):
            raise TypeError("out should not be a set: its items cannot be matched with data's")
    if isinstance(data, torch.Tensor):
        moved = data.to(device)
        if out is not None:
            out.copy_(moved)
        return moved
    if isinstance(data, Mapping):
        if out is not None and len(out) != len(data):
            raise ValueError(f"out has {len(out)} items, but data has {len(data)}")
        moved_items = {
            key: cast_data_device(value, device, None if out is None else out[key])
            for key, value in data.items()
        }
        if not moved_items:
            raise ValueError("data should not be empty")
        return type(data)(moved_items)
    if isinstance(data, Iterable) and not isinstance(data, (str, np.ndarray)):
        items = list(data)
        targets = [None] * len(items) if out is None else list(out)
        if len(targets) != len(items):
            raise ValueError(f"out has {len(targets)} items, but data has {len(items)}")
        pairs = zip(items, targets)
        moved_list = [cast_data_device(item, device, target) for item, target in pairs]
        if not moved_list:
            raise ValueError("data should not be empty")
        if hasattr(data, "_fields"):  # a namedtuple takes its fields one by one
            return type(data)(*moved_list)
        return type(data)(moved_list)
    raise TypeError(f"data should be a tensor, or a sequence or dict of tensors, but got {data!r}")
