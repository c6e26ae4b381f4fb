"""Benchmark: 2-rank DDP and FSDP training of the Transformer example, runnerx's Runner against
a hand-written torch DDP / FSDP loop (CPU, gloo; on GPUs, nccl).

    python tools/benchmark_distributed.py          # ddp, fsdp zero2, fsdp zero3: ~6 min on 2 cores
    python tools/benchmark_distributed.py --strategies ddp --iters 400 --chunk 20

Each of two spawned ranks trains ``configs/char_transformer.py`` (4 TransformerBlocks,
128 wide, batch 32 of 128 bytes per rank, AdamW, gradient clipping at norm 1) with the
Runner and ``strategy``. After every ``chunk`` Runner iterations a hook of the lowest priority
notes their time and runs ``chunk`` iterations of the plain loop: the same model class from
the same initial weights, wrapped by torch's ``DistributedDataParallel`` or ``fully_shard``
(each block, then the root), its own AdamW with the same settings, a torch DataLoader with a
``DistributedSampler`` over the same dataset, and forward, ``backward``,
``clip_grad_norm_``, ``step``, ``zero_grad``. The Runner keeps its default hooks (logger
every 50 iterations, no checkpoints, no validation, no LR schedule). The overhead is the
median of the per-chunk ratios, rank 0's clock (the ranks move in lockstep). Medians of the
per-iteration times come with it. See docs/speed.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import pickle
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
STRATEGIES = {
    "ddp": dict(type="DDP"),
    "fsdp_zero2": dict(type="FSDP", sharding="zero2", wrap_modules=["TransformerBlock"]),
    "fsdp_zero3": dict(type="FSDP", sharding="zero3", wrap_modules=["TransformerBlock"]),
}
WORLD_SIZE = 2


def runner_config(strategy: str, iters: int, work_dir: str) -> Any:
    """The Transformer example for ``iters`` iterations under ``strategy``, no validation,
    checkpoints or schedule (the plain loop has none of them)."""
    from runnerx import Config

    cfg = Config.fromfile(ROOT / "configs/char_transformer.py")
    cfg.merge_from_dict(
        {
            "work_dir": work_dir,
            "launcher": "pytorch",
            "strategy": STRATEGIES[strategy],
            "train_cfg": dict(by_epoch=False, max_iters=iters, val_interval=10**9),
            "param_scheduler": None,
            "default_hooks.checkpoint": None,
        }
    )
    for key in ("val_dataloader", "val_cfg", "val_evaluator"):
        cfg[key] = None
    return cfg


class PlainLoop:
    """The hand-written distributed loop (see the module docstring)."""

    def __init__(self, cfg: Any, strategy: str, initial_state: dict, dataset: Any) -> None:
        from runnerx.registry import MODELS

        model = MODELS.build(cfg.model)
        model.load_state_dict(initial_state)
        self.model = self._wrap(model, strategy)
        optimizer_cfg = dict(cfg.optim_wrapper.optimizer)
        optimizer_cfg.pop("type")
        self.optimizer = torch.optim.AdamW(self.model.parameters(), **optimizer_cfg)
        self.max_norm = cfg.optim_wrapper.clip_grad.max_norm
        sampler = torch.utils.data.DistributedSampler(dataset, shuffle=True, seed=0)
        self.loader = torch.utils.data.DataLoader(
            dataset, batch_size=cfg.train_dataloader.batch_size, sampler=sampler
        )
        self.batches = self._endless(sampler)

    @staticmethod
    def _wrap(model: torch.nn.Module, strategy: str) -> torch.nn.Module:
        if strategy == "ddp":
            return torch.nn.parallel.DistributedDataParallel(model)
        from runnerx.parallel.fsdp import fsdp_api

        fully_shard = fsdp_api().fully_shard
        reshard = strategy == "fsdp_zero3"
        blocks = [m for m in model.modules() if type(m).__name__ == "TransformerBlock"]
        for index, block in enumerate(blocks):
            fully_shard(block, reshard_after_forward=reshard and index < len(blocks) - 1)
        return fully_shard(model, reshard_after_forward=reshard)

    def _endless(self, sampler: Any) -> Any:
        epoch = 0
        while True:
            sampler.set_epoch(epoch)
            yield from self.loader
            epoch += 1

    def run(self, iters: int) -> float:
        """Train ``iters`` iterations; return the seconds they took."""
        model, optimizer = self.model, self.optimizer
        start = time.perf_counter()
        for _ in range(iters):
            batch = next(self.batches)
            loss = model(batch["inputs"], batch["data_samples"], mode="loss")["loss"]
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), self.max_norm)
            optimizer.step()
            optimizer.zero_grad()
        return time.perf_counter() - start


@contextlib.contextmanager
def quiet_output() -> Any:
    """The Runner's console lines go nowhere (its log file is written as usual)."""
    with (
        open(os.devnull, "w") as sink,
        contextlib.redirect_stdout(sink),
        contextlib.redirect_stderr(sink),
    ):
        yield


def plain_loop(cfg: Any, strategy: str, initial_state: dict, runner: Any) -> PlainLoop:
    """The plain loop beside ``runner``, reading the Runner's training dataset."""
    return PlainLoop(cfg, strategy, initial_state, runner.train_dataloader.dataset)


def chunk_timer(chunk: int, make_plain: Any) -> Any:
    """A hook (lowest priority) that times every ``chunk`` Runner iterations, then runs
    ``chunk`` plain iterations."""
    from runnerx.hooks import Hook

    class ChunkTimer(Hook):
        priority = "LOWEST"

        def before_train(self, runner: Any) -> None:
            self.plain = make_plain(runner)
            self.runner_times: list[float] = []
            self.plain_times: list[float] = []
            self.count = 0
            self.start = time.perf_counter()

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            self.count += 1
            if self.count % chunk:
                return
            self.runner_times.append(time.perf_counter() - self.start)
            self.plain_times.append(self.plain.run(chunk))
            self.start = time.perf_counter()

    return ChunkTimer()


def run_rank(rank: int, port: int, out_dir: str, args: argparse.Namespace) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        WORLD_SIZE=str(WORLD_SIZE),
    )
    torch.set_num_threads(args.threads)
    from runnerx.runner import Runner

    results = {}
    for strategy in args.strategies:
        cfg = runner_config(strategy, args.iters, os.path.join(out_dir, strategy))
        with quiet_output():
            runner = Runner.from_cfg(cfg)
            initial = {  # whole tensors on every rank (FSDP holds shards: gather them)
                key: value.full_tensor() if hasattr(value, "full_tensor") else value.clone()
                for key, value in runner.unwrapped_model.state_dict().items()
            }
            plain = functools.partial(plain_loop, cfg, strategy, initial)
            timer = chunk_timer(args.chunk, plain)
            runner.register_hook(timer)
            runner.train()
        results[strategy] = (timer.runner_times, timer.plain_times)
    if rank == 0:
        with open(os.path.join(out_dir, "times.pkl"), "wb") as file:
            pickle.dump(results, file)
    dist.barrier()
    dist.destroy_process_group()


def report(results: dict, args: argparse.Namespace) -> None:
    chunk, warmup = args.chunk, args.warmup
    print(
        f"{time.strftime('%Y-%m-%d')}: 2 ranks (gloo, CPU, {args.threads} torch thread(s) "
        f"each), torch {torch.__version__}, {os.cpu_count()} CPUs, chunks of {chunk} "
        f"iterations, the first {warmup} left out"
    )
    header = f"{'strategy':12} {'chunks':>6} {'plain ms/it':>12} {'runnerx ms/it':>14}"
    print(f"{header} {'overhead':>9} {'IQR':>17}")
    print("-" * (len(header) + 28))
    for strategy, (runner_times, plain_times) in results.items():
        pairs = list(zip(runner_times, plain_times))[warmup:]
        ratios = [ours / theirs - 1 for ours, theirs in pairs]
        q1, _, q3 = statistics.quantiles(ratios, n=4)
        plain = statistics.median(t for _, t in pairs) / chunk * 1e3
        ours = statistics.median(t for t, _ in pairs) / chunk * 1e3
        print(
            f"{strategy:12} {len(pairs):6d} {plain:12.1f} {ours:14.1f} "
            f"{statistics.median(ratios):+8.1%} {q1:+8.1%}..{q3:+.1%}"
        )
    print("overhead: median of the per-chunk ratios runnerx / plain; goal: within 3%")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--strategies", nargs="+", choices=list(STRATEGIES), default=None)
    parser.add_argument("--iters", type=int, default=150, help="Runner iterations per strategy")
    parser.add_argument("--chunk", type=int, default=10, help="iterations per timed chunk")
    parser.add_argument("--warmup", type=int, default=2, help="first chunks left out")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    args = parser.parse_args()
    args.strategies = args.strategies or list(STRATEGIES)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as out_dir:
        mp.spawn(run_rank, args=(port, out_dir, args), nprocs=WORLD_SIZE, join=True)
        with open(os.path.join(out_dir, "times.pkl"), "rb") as file:
            results = pickle.load(file)
    report(results, args)


if __name__ == "__main__":
    main()
