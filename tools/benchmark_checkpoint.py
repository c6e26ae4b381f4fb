"""Benchmark: saving and loading the Transformer example's checkpoint, runnerx vs plain torch.

    python tools/benchmark_checkpoint.py [--rounds 21] [--dir work_dirs/benchmark_checkpoint]

The checkpoint is the real one: a Runner built from configs/char_transformer.py trains one
iteration (AdamW then has its state), and ``runner_checkpoint(runner)`` gives the dict a
CheckpointHook would save (weights, optimizer, schedulers, message hub, RNG states, data
position). Into one folder, in interleaved rounds (the order alternates), it is

    saved   runnerx: save_checkpoint(background=True), as the Runner saves: serialised into a
                     temporary file before it returns; fsync and rename on the writer thread
                     (the time training waits; the writer is drained between rounds)
            plain:   torch.save(checkpoint, path)
    loaded  runnerx: load_checkpoint (weights_only=True with runnerx's allowlist)
            plain:   torch.load(path, map_location='cpu') (its default: weights_only=True)

and the medians are compared with plain torch; the goal is at most 1.2x. More rows show what
the guarantees cost when waited for: ``runnerx, waiting for the disk`` (the same save in the
foreground), ``torch.save + fsync`` (durable, but a crash while writing tears the file), and
``torch.load weights_only=False`` (the unsafe load runnerx refuses by default).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import torch

from runnerx.checkpoint import load_checkpoint, save_checkpoint
from runnerx.checkpoint.runner_state import runner_checkpoint
from runnerx.config import Config
from runnerx.fileio import wait_for_pending_writes
from runnerx.runner import Runner

ROOT = Path(__file__).parents[1]


def transformer_checkpoint(work_dir: Path) -> dict:
    """The checkpoint dict of the Transformer example after one training iteration."""
    cfg = Config.fromfile(ROOT / "configs/char_transformer.py")
    cfg.work_dir = str(work_dir / "run")
    cfg.train_cfg.max_iters = 1
    cfg.train_cfg.val_interval = 10
    cfg.default_hooks.checkpoint = None
    cfg.log_level = "WARNING"
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner_checkpoint(runner, by_epoch=False)


def plain_save_with_fsync(checkpoint: dict, path: Path) -> None:
    with open(path, "wb") as file:
        torch.save(checkpoint, file)
        file.flush()
        os.fsync(file.fileno())


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def measure(checkpoint: dict, folder: Path, rounds: int) -> dict[str, list[float]]:
    """Seconds per operation, in interleaved rounds whose order alternates."""
    ours, plain = folder / "runnerx.pth", folder / "plain.pth"
    actions = {
        "save: runnerx": lambda: save_checkpoint(checkpoint, ours, background=True),
        "save: plain": lambda: torch.save(checkpoint, plain),
        "save: runnerx, waiting for the disk": lambda: save_checkpoint(checkpoint, ours),
        "save: torch.save + fsync": lambda: plain_save_with_fsync(checkpoint, plain),
        "load: runnerx": lambda: load_checkpoint(ours),
        "load: plain": lambda: torch.load(plain, map_location="cpu"),
        "load: weights_only=False": lambda: torch.load(
            plain, map_location="cpu", weights_only=False
        ),
    }
    for action in actions.values():  # warm up (and create both files)
        action()
    times: dict[str, list[float]] = {name: [] for name in actions}
    for round_index in range(rounds):
        names = list(actions) if round_index % 2 == 0 else list(reversed(actions))
        for name in names:
            times[name].append(timed(actions[name]))
            wait_for_pending_writes()  # outside the timing: rounds do not overlap
    return times


def print_table(times: dict[str, list[float]], size_mb: float, rounds: int) -> None:
    print(f"\nTransformer example checkpoint, {size_mb:.1f} MB; median of {rounds} rounds")
    print(f"{'':<38}{'median ms':>10}{'vs plain':>10}")
    for name, values in times.items():
        kind = name.split(":")[0]
        base = statistics.median(times[f"{kind}: plain"])
        median = statistics.median(values)
        print(f"{name:<38}{median * 1e3:>10.1f}{median / base:>9.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--rounds", type=int, default=21, help="interleaved timing rounds")
    parser.add_argument(
        "--dir",
        default="work_dirs/benchmark_checkpoint",
        help="folder to save into (on the disk checkpoints go to; removed afterwards)",
    )
    args = parser.parse_args()
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        checkpoint = transformer_checkpoint(folder)
        times = measure(checkpoint, folder, args.rounds)
        size_mb = (folder / "runnerx.pth").stat().st_size / 2**20
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print_table(times, size_mb, args.rounds)


if __name__ == "__main__":
    main()
