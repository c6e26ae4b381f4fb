"""What a little Python work costs between torch's steps, against what it costs alone.

The Runner's per-iteration overhead on the tiny MLP (docs/speed.md) is several times what its
Python code takes when timed on its own. This script shows why with the plain MLP loop of
tools/benchmark_runner.py: it inserts one piece of Python work after each step and compares
the time that adds with the time the same work takes in a loop by itself (same process,
chunks interleaved in random order, medians of paired differences)::

    python tools/benchmark_in_situ.py            # about 70 s
    python tools/benchmark_in_situ.py --rounds 100 --inline-rounds 50

The pieces: a tight loop (40 additions: few distinct instructions), keeping each step's loss
tensor until the next logged line (as the Runner does, so reading it waits for no device),
and the default hooks' per-iteration recording (RuntimeInfoHook and IterTimerHook on a real
MessageHub, exactly the Runner's calls).

A second table bounds what any Runner that keeps MMEngine's model contract and default
logging can reach: the same work written inline in one function, with no hooks, MessageHub
or LogProcessor (:mod:`benchmarks.inline_contract`), against the plain loop, with precomputed
batches and with a DataLoader, whole and part by part.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
from collections.abc import Callable, Iterator
from time import perf_counter
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from benchmarks.inline_contract import PARTS, InlineContractLoop  # tools/: the script's folder
from benchmarks.runner_data import (
    MODES,
    SHAPES,
    CycledBatches,
    SampleDicts,
    make_batches,
    plain_batches,
)
from benchmarks.runner_loops import LR, MOMENTUM, make_net

from runnerx.hooks import IterTimerHook, RuntimeInfoHook
from runnerx.logging import MessageHub
from runnerx.optim import OptimWrapper

CHUNK = 100  # iterations per timed chunk; every piece of work starts afresh each chunk


def work_pieces(optimizer: torch.optim.Optimizer) -> dict[str, Callable[[int, torch.Tensor], None]]:
    """The pieces of Python work to insert after a step, by name."""
    runner = SimpleNamespace(optim_wrapper=OptimWrapper(optimizer), iter=0, message_hub=None)
    info, timer = RuntimeInfoHook(), IterTimerHook()
    kept: list = []

    def tight_loop(i: int, loss: torch.Tensor) -> None:
        total = 0
        for k in range(40):
            total += k

    def keep_loss(i: int, loss: torch.Tensor) -> None:
        if not i:
            kept.clear()
        kept.append(loss.detach())

    def hook_recording(i: int, loss: torch.Tensor) -> None:
        if not i:  # a fresh hub per chunk, so that its history stays as short as in a run
            runner.message_hub = MessageHub(f"in_situ_{perf_counter()}")
        outputs = {"loss": loss.detach()}
        info.before_train_iter(runner, batch_idx=i, data_batch=None)
        timer.before_train_iter(runner, batch_idx=i, data_batch=None)
        info.after_train_iter(runner, batch_idx=i, data_batch=None, outputs=outputs)
        timer.after_train_iter(runner, batch_idx=i, data_batch=None, outputs=outputs)

    return {"tight loop": tight_loop, "keep loss": keep_loss, "hook recording": hook_recording}


def main(argv: list[str] | None = None) -> None:
    """Print the two tables: pieces of work alone and between MLP steps; the inline contract."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=300, help="chunks of each kind to time")
    parser.add_argument(
        "--inline-rounds", type=int, default=100, help="chunks of each kind, second table"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    pieces_table(args.rounds)
    inline_contract_table(args.inline_rounds)


def pieces_table(rounds: int) -> None:
    """Each piece of work after each plain MLP step, against the same piece alone."""
    torch.manual_seed(0)
    net = make_net("mlp").train()
    optimizer = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    inputs, labels = torch.randn(64, 32), torch.randint(0, 10, (64,))
    pieces = work_pieces(optimizer)

    def nothing(i: int, loss: torch.Tensor) -> None:
        pass

    def with_steps(work: Callable) -> float:
        start = perf_counter()
        for i in range(CHUNK):
            loss = F.cross_entropy(net(inputs), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            work(i, loss)
        return (perf_counter() - start) / CHUNK * 1e6

    def alone(work: Callable) -> float:
        loss = torch.tensor(1.0)
        start = perf_counter()
        for i in range(CHUNK):
            work(i, loss)
        return (perf_counter() - start) / CHUNK * 1e6

    for work in (nothing, *pieces.values()):  # warm up
        with_steps(work)
        alone(work)
    in_situ: dict[str, list[float]] = {name: [] for name in pieces}
    by_itself: dict[str, list[float]] = {name: [] for name in pieces}
    plain: list[float] = []
    for _ in range(rounds):
        for name in random.sample(list(pieces), len(pieces)):
            base = with_steps(nothing)
            plain.append(base)
            in_situ[name].append(with_steps(pieces[name]) - base)
            by_itself[name].append(alone(pieces[name]) - alone(nothing))
    print(f"plain MLP step (32-64-10, batch 64): {statistics.median(plain):.1f} us")
    print(f"{'work after each step':<22}{'alone us':>10}{'between steps us':>18}{'ratio':>8}")
    for name in pieces:
        cost, cost_alone = statistics.median(in_situ[name]), statistics.median(by_itself[name])
        ratio = f"{cost / cost_alone:.1f}x" if cost_alone > 0.05 else "-"
        print(f"{name:<22}{cost_alone:>10.2f}{cost:>18.2f}{ratio:>8}")


def inline_contract_table(rounds: int) -> None:
    """The inline contract loop, whole and part by part, against the plain MLP loop, with
    precomputed batches and with a DataLoader (as tools/benchmark_runner.py's two modes)."""
    combinations = [("contract",), ("recording",), ("contract", "recording"), PARTS]
    print(
        "\nThe Runner's per-iteration work written inline (no hooks, MessageHub or "
        "LogProcessor), against the plain MLP loop"
    )
    print(f"{'data':<9}{'parts':<30}{'plain us':>10}{'+us':>8}{'overhead':>10}")
    with tempfile.TemporaryDirectory() as log_dir:
        for mode in MODES:
            torch.manual_seed(0)
            net = make_net("mlp").train()
            optimizer = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
            plain = InlineContractLoop(net, optimizer, _batches(mode), (), log_dir)
            loops = {
                parts: InlineContractLoop(net, optimizer, _batches(mode), parts, log_dir)
                for parts in combinations
            }
            for loop in (plain, *loops.values()):  # warm up
                loop.run(CHUNK)
            added: dict[tuple, list[float]] = {parts: [] for parts in loops}
            ratios: dict[tuple, list[float]] = {parts: [] for parts in loops}
            plain_times: list[float] = []
            for _ in range(rounds):
                for parts in random.sample(list(loops), len(loops)):
                    base = plain.run(CHUNK)
                    cost = loops[parts].run(CHUNK)
                    plain_times.append(base / CHUNK * 1e6)
                    added[parts].append((cost - base) / CHUNK * 1e6)
                    ratios[parts].append((cost / base - 1) * 100)
            for parts in loops:
                print(
                    f"{mode:<9}{' + '.join(parts):<30}{statistics.median(plain_times):>10.1f}"
                    f"{statistics.median(added[parts]):>8.1f}"
                    f"{statistics.median(ratios[parts]):>+9.1f}%"
                )
    print("+us and overhead: medians of the paired differences and ratios of 100-iteration chunks")


def _batches(mode: str) -> Iterator[dict]:
    """An endless stream of MLP batches of its own, as tools/benchmark_runner.py's plain loop
    reads them in ``mode``: precomputed, or from a DataLoader over per-sample dicts."""
    if mode == "batches":
        return plain_batches(mode, CycledBatches(make_batches("mlp")))
    loader = SimpleNamespace(dataset=SampleDicts("mlp"), batch_size=SHAPES["mlp"][0])
    return plain_batches(mode, loader)


if __name__ == "__main__":
    main()
