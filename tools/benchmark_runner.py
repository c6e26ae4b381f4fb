"""Benchmark: the Runner against a hand-written PyTorch loop (and MMEngine's Runner).

    python tools/benchmark_runner.py                  # everything, about 5 minutes on 2 cores
    python tools/benchmark_runner.py --data batches --mlp-iters 10000 --cnn-iters 1000
    python tools/benchmark_runner.py --profile        # cProfile of the Runner's MLP loop

Tables 1 and 2 come once per data mode (``--data``, both by default; see
``benchmarks/runner_data.py``): ``loader``, both loops read from a DataLoader over a dataset
of per-sample dicts, as real training does; ``batches``, both cycle through precomputed
batches, so that only the framework's own cost is left (the stricter figure).

1. Overhead per iteration. A Runner (default hooks, logger interval 50, no checkpoints, a real
   OptimWrapper with SGD + momentum) trains a model; after every chunk of its iterations a
   hook notes their time and runs as many iterations of a plain loop (forward, cross-entropy,
   backward, step, zero_grad) on the same network and optimizer. The overhead is the median
   of the per-chunk ratios. First, separate runs check that Runner and plain loop, from the
   same initial weights on the same data in the same order, end with bitwise equal weights.
   The 'floor' row is runnerx's Runner without hooks running the plain step itself: what the
   bare loop (and, with a DataLoader, runnerx's sampler and collate) and the method cost.
2. Cost over a long run: the MLP run's it/s over its first and its last 1,000 iterations.
3. Start-up: see ``benchmarks/runner_startup.py``.

MMEngine's Runner (mmengine-lite, with opencv-python-headless and matplotlib, which its hooks
and visualizer import) is measured the same way when it can be imported. See docs/speed.md.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from benchmarks.runner_data import BATCHES_PER_EPOCH, MODES
from benchmarks.runner_loops import (
    ChunkTimer,
    build_runner,
    devnull,
    mmengine_classes,
    same_weights_after,
    train_interleaved,
)
from benchmarks.runner_startup import startup_table

from runnerx.hooks import Hook

ROOT = Path(__file__).resolve().parents[1]
WINDOW = 1000  # iterations at each end of the long run
# Steps of the weight check. With a DataLoader, one epoch: the plain loop's RandomSampler and
# DefaultSampler shuffle alike in the first epoch only.
CHECK_STEPS = {
    "batches": {"mlp": 500, "cnn": 100},
    "loader": {"mlp": BATCHES_PER_EPOCH, "cnn": BATCHES_PER_EPOCH},
}
MODE_TITLES = {
    "loader": "data from a DataLoader (a dataset of per-sample dicts, shuffled by a seeded "
    "sampler, default_collate, num_workers=0; Runners train by epochs of "
    f"{BATCHES_PER_EPOCH} batches)",
    "batches": "precomputed batches, cycled (no data cost; Runners train by iterations)",
}
LABELS = {"mlp": "MLP 32-64-10 b64", "cnn": "CNN 1x28x28 b32"}
GOALS = {"mlp": 5.0, "cnn": 2.0}  # per cent
ISSUE = {"mlp": "+34-46%", "cnn": "+12-16%"}  # MMEngine's overhead in the issue
# Left to itself, glibc's malloc moves its mmap threshold and trims the heap as it sees fit, and
# the CNN's activations are page-faulted back in every iteration (~700 faults per iteration
# here, 5-10% more in a Runner's chunks than in the plain loop's, depending on heap layout).
# Fixed thresholds take that allocator noise out of the comparison.
FIXED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "1073741824"}


def check_weights(kinds: list[str], mode: str, work_dir: str) -> None:
    """Print whether each Runner reaches the plain loop's weights on ``mode``'s data."""
    for arch, steps in CHECK_STEPS[mode].items():
        for kind in kinds:
            equal = same_weights_after(kind, arch, mode, steps, work_dir)
            verdict = "equal" if equal else "DIFFERENT: the comparison below is invalid"
            print(
                f"check ({mode}): {kind} Runner and plain loop, {arch.upper()}, {steps} steps: "
                f"{verdict}"
            )


def overhead_table(runs: dict[tuple[str, str], ChunkTimer], mode: str) -> None:
    """Print per-iteration times and overheads, medians over paired chunks."""
    print(f"\n1. Overhead per training iteration against the plain loop, {mode} (interleaved)")
    header = (
        f"{'model':<18}{'Runner':<10}{'chunks':>8}{'plain us/it':>12}{'Runner us/it':>13}"
        f"{'+us/it':>8}{'overhead':>10}{'IQR':>16}{'all-time':>10}  goal / issue"
    )
    print(header + "\n" + "-" * len(header))
    for (kind, arch), timer in runs.items():
        ours, plain, chunk = timer.runner_times, timer.plain_times, timer.chunk
        ratios = [(r / p - 1) * 100 for r, p in zip(ours, plain)]
        low, median, high = statistics.quantiles(ratios, n=4)
        extra = statistics.median(r - p for r, p in zip(ours, plain)) / chunk * 1e6
        notes = {"runnerx": f"goal <= {GOALS[arch]:g}%", "mmengine": f"issue: {ISSUE[arch]}"}
        row = (
            f"{LABELS[arch]:<18}{kind:<10}{f'{len(ratios)}x{chunk}':>8}"
            f"{statistics.median(plain) / chunk * 1e6:>12.1f}"
            f"{statistics.median(ours) / chunk * 1e6:>13.1f}{extra:>8.1f}{median:>+9.1f}%"
            f"{f'{low:+.1f}..{high:+.1f}%':>16}{(sum(ours) / sum(plain) - 1) * 100:>+9.1f}%"
            f"  {notes.get(kind, '')}"
        )
        print(row.rstrip())
    print(
        "us/it: median chunk time per iteration; +us/it and overhead: medians of the paired "
        "differences and ratios;\nIQR: quartiles of the ratios; all-time: total Runner time over "
        "total plain time (counts rare pauses too)"
    )


def growth_table(runs: dict[tuple[str, str], ChunkTimer], iters: int, mode: str) -> None:
    """Print the long MLP runs' it/s over their first and their last WINDOW iterations."""
    first, last = f"0-{WINDOW // 1000}k", f"{(iters - WINDOW) // 1000}k-{iters // 1000}k"
    print(f"\n2. It/s over one {iters:,}-iteration MLP run, {mode} (median chunk of each window)")
    header = (
        f"{'Runner':<10}{'Runner ' + first:>12}{'Runner ' + last:>16}{'change':>9}"
        f"{'plain ' + first:>13}{'plain ' + last:>15}{'change':>9}"
    )
    print(header + "\n" + "-" * len(header))
    for (kind, arch), timer in runs.items():
        if arch != "mlp" or len(timer.runner_times) * timer.chunk != iters:
            continue
        n = WINDOW // timer.chunk
        cells = []
        for times in (timer.runner_times, timer.plain_times):
            start, end = (timer.chunk / statistics.median(t) for t in (times[:n], times[-n:]))
            cells.append(f"{start:>12.0f}{end:>16.0f}{(end / start - 1) * 100:>+8.1f}%")
        print(f"{kind:<10}{cells[0]}{cells[1]}")


class ProfiledTraining(Hook):
    """Profiles from before_train to after_train, so that start-up is left out."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.profiler = cProfile.Profile()

    def before_train(self, runner: Any) -> None:
        """Start profiling."""
        self.profiler.enable()

    def after_train(self, runner: Any) -> None:
        """Stop profiling."""
        self.profiler.disable()


def profile_runner(iters: int, mode: str, work_dir: str, top: int = 15) -> None:
    """Print what costs the runnerx MLP loop on ``mode``'s data most, in us per iteration,
    overall and in runnerx's own code (cProfile's own cost inflates every Python call: read
    the ranking more than the absolute numbers)."""
    hook = ProfiledTraining()
    with contextlib.redirect_stdout(devnull()):
        build_runner("runnerx", "mlp", mode, iters, work_dir, [hook]).train()
    stats = pstats.Stats(hook.profiler).stats  # (file, line, name) -> (_, calls, own, cum, _)
    package = str(ROOT / "runnerx")
    ranked = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)
    ours = [item for item in ranked if item[0][0].startswith(package)]
    print(f"cProfile of the runnerx MLP Runner loop, {mode}, {iters} iterations")
    for title, rows in (("everything", ranked[:top]), ("runnerx's own code", ours[:top])):
        print(f"\n{title}:\n{'own us/it':>10}{'cum us/it':>10}{'calls/it':>9}  function")
        for (file, line, name), (_, calls, own, cumulative, _) in rows:
            where = os.path.relpath(file, ROOT) if file.startswith(package) else Path(file).name
            print(
                f"{own / iters * 1e6:>10.2f}{cumulative / iters * 1e6:>10.2f}"
                f"{calls / iters:>9.2f}  {name} ({where}:{line})"
            )
    total = sum(values[2] for _, values in ours)
    print(f"own time in runnerx code: {total / iters * 1e6:.1f} us/it (profiled)")


def main() -> None:
    """Parse the flags, run the benchmarks and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument(
        "--data",
        nargs="+",
        choices=MODES,
        default=list(MODES),
        help="data modes to measure, in this order (default: loader batches)",
    )
    parser.add_argument("--mlp-iters", type=int, default=40_000, help="length of the MLP runs")
    parser.add_argument("--cnn-iters", type=int, default=2_500, help="length of the CNN runs")
    parser.add_argument("--mlp-chunk", type=int, default=100, help="MLP iterations per chunk")
    parser.add_argument("--cnn-chunk", type=int, default=5, help="CNN iterations per chunk")
    parser.add_argument("--startup-runs", type=int, default=8, help="start-up runs (0: none)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (0: its default)")
    parser.add_argument("--no-mmengine", action="store_true", help="leave MMEngine's Runner out")
    parser.add_argument(
        "--profile", action="store_true", help="only profile the runnerx MLP loop (first --data)"
    )
    parser.add_argument(
        "--default-malloc", action="store_true", help="keep glibc's adaptive malloc thresholds"
    )
    args = parser.parse_args()
    fixed = all(os.environ.get(key) == value for key, value in FIXED_MALLOC.items())
    if not (args.default_malloc or fixed or sys.platform == "win32"):
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, **FIXED_MALLOC})
    if WINDOW % args.mlp_chunk or args.mlp_iters % args.mlp_chunk or args.mlp_iters < 2 * WINDOW:
        parser.error(f"--mlp-chunk must divide {WINDOW} and --mlp-iters (at least {2 * WINDOW})")
    if args.cnn_iters % args.cnn_chunk or args.cnn_iters < 4 * args.cnn_chunk:
        parser.error("--cnn-chunk must divide --cnn-iters (at least 4 chunks)")
    if "loader" in args.data and (
        args.mlp_iters % BATCHES_PER_EPOCH or args.cnn_iters % BATCHES_PER_EPOCH
    ):
        parser.error(
            f"with --data loader, --mlp-iters and --cnn-iters are whole epochs: "
            f"multiples of {BATCHES_PER_EPOCH}"
        )
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="runnerx_bench_") as work_dir:
        if args.profile:
            profile_runner(20_000, args.data[0], work_dir)
            return
        print(
            f"{time.strftime('%Y-%m-%d')}: torch {torch.__version__}, {os.cpu_count()} CPUs, "
            f"{torch.get_num_threads()} torch thread(s), Python {sys.version.split()[0]}, "
            f"malloc thresholds {'fixed' if fixed else 'adaptive (glibc default)'}"
        )
        peers = [] if args.no_mmengine or not mmengine_classes() else ["mmengine"]
        plan = {"mlp": (args.mlp_iters, args.mlp_chunk), "cnn": (args.cnn_iters, args.cnn_chunk)}
        for mode in args.data:
            print(f"\n=== {mode}: {MODE_TITLES[mode]} ===")
            check_weights(["runnerx", *peers], mode, work_dir)
            runs = {}
            for arch, (iters, chunk) in plan.items():
                for kind in ("runnerx", "floor", *peers):
                    length = min(iters, 10_000) if kind == "floor" else iters  # no long run
                    runs[(kind, arch)] = train_interleaved(
                        kind, arch, mode, length, chunk, work_dir
                    )
            overhead_table(runs, mode)
            growth_table(runs, args.mlp_iters, mode)
        if args.startup_runs:
            startup_table(args.startup_runs, work_dir)


if __name__ == "__main__":
    main()
