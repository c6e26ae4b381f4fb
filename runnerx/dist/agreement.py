"""AnyRankFlag: a flag that any rank can raise and every rank learns at the same step.

A signal reaches each rank of a job at its own moment, but every rank must act on it at the
same iteration (a checkpoint under FSDP is a collective). Each :meth:`AnyRankFlag.check`
starts a non-blocking all-reduce (max) of this rank's flag, an int (0: not raised), on a
gloo group of its own and returns the result of the previous call's reduction, so every rank
gets the same answer at the same call, one call after the first rank raised it, without a
device synchronisation or a wait in the training step.

.. code-block:: python

    flag = AnyRankFlag()
    for batch in batches:
        step(batch)
        if flag.check(received_signal):   # the same int on every rank
            save_checkpoint_together()
            break
    flag.close()
"""

from __future__ import annotations

from typing import Any

import torch
import torch.distributed as torch_dist

from .utils import is_distributed


class AnyRankFlag:
    """Agreement between ranks on a flag that any of them may raise (see the module docstring).

    All ranks must create it together and call :meth:`check` the same number of times.
    Without a process group, :meth:`check` returns the local flag at once.
    """

    def __init__(self) -> None:
        self._group: Any = None
        self._pending: Any = None
        self._value = torch.zeros(1, dtype=torch.int32)
        #: whether other ranks take part (else the flag is this rank's own, no call needed)
        self.shared = is_distributed()
        if self.shared:
            # gloo on the CPU whatever the main backend: no CUDA stream, no host sync
            self._group = torch_dist.new_group(backend="gloo")

    def check(self, raised: int) -> int:
        """Share this rank's flag ``raised`` (0: not raised) and return the largest flag of
        any rank at the previous call (the same answer on every rank)."""
        if self._group is None:
            return raised
        agreed = self._collect()
        self._value = torch.tensor([int(raised)], dtype=torch.int32)
        self._pending = torch_dist.all_reduce(
            self._value, op=torch_dist.ReduceOp.MAX, group=self._group, async_op=True
        )
        return agreed

    def close(self) -> int:
        """Finish the reduction in flight (before the process group goes) and return it."""
        if self._group is None:
            return 0
        agreed = self._collect()
        torch_dist.destroy_process_group(self._group)
        self._group = None
        return agreed

    def _collect(self) -> int:
        if self._pending is None:
            return 0
        self._pending.wait()
        self._pending = None
        return int(self._value.item())
