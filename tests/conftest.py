"""Fixtures every test folder can use: a free port, and spawned ranks run to completion."""

import pickle
import socket
import time
from pathlib import Path

import pytest
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def free_port():
    """A function giving a free localhost port."""
    return _free_port


@pytest.fixture(scope="session")
def spawn_ranks():
    """A function ``(run_rank, out_dir, world_size, timeout)`` that spawns ``run_rank(rank,
    port, out_dir)`` on every rank, fails the test if they do not finish within ``timeout``
    seconds, and returns what each rank pickled to ``out_dir/rank<r>.pkl``."""

    def spawn(run_rank, out_dir: Path, world_size: int, timeout: float) -> list:
        args = (_free_port(), str(out_dir))
        context = mp.spawn(run_rank, args=args, nprocs=world_size, join=False)
        deadline = time.monotonic() + timeout
        while not context.join(timeout=1):
            if time.monotonic() > deadline:
                for process in context.processes:
                    process.kill()
                pytest.fail(f"the ranks did not finish within {timeout} s")
        outcomes = []
        for rank in range(world_size):
            with open(Path(out_dir) / f"rank{rank}.pkl", "rb") as file:
                outcomes.append(pickle.load(file))
        return outcomes

    return spawn
