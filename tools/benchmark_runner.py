"""Benchmark: the Runner against a hand-written PyTorch loop (and MMEngine's Runner).

    python tools/benchmark_runner.py                  # everything, a few minutes on 2 cores
    python tools/benchmark_runner.py --mlp-iters 10000 --cnn-iters 1000 --startup-runs 4
    python tools/benchmark_runner.py --profile        # cProfile of the Runner's MLP loop

1. Overhead per iteration. A Runner (default hooks, logger interval 50, no checkpoints, a real
   OptimWrapper with SGD + momentum) trains a model while a hook of the lowest priority, after
   every ``chunk`` Runner iterations, notes their time and runs ``chunk`` iterations of a plain
   loop (forward, cross-entropy, backward, step, zero_grad) on its own copy of the weights.
   Both read the same precomputed batches in the same order, so they must end with equal
   weights (checked); the overhead is the median of the per-chunk time ratios.
2. Cost over a long run: the MLP run's it/s over its first and its last 1,000 iterations.
3. Start-up: see ``benchmarks/runner_startup.py``.

MMEngine's Runner (mmengine-lite, plus opencv-python-headless and matplotlib, which its
hooks and visualizer import) is measured the same way when it can be imported.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import itertools
import os
import pstats
import statistics
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from time import perf_counter
from typing import Any

import torch
import torch.nn.functional as F
from benchmarks.runner_startup import startup_table
from torch import nn
from torch.utils.data import DataLoader

from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.registry import MODELS

ROOT = Path(__file__).resolve().parents[1]
LR, MOMENTUM, WINDOW = 0.01, 0.9, 1000
MODELS_INFO = {  # arch: (batch size, input shape, goal in %, MMEngine's cost in the issue)
    "mlp": (64, (32,), 5.0, "+34-46%"),
    "cnn": (32, (1, 28, 28), 2.0, "+12-16%"),
}


def make_net(arch: str) -> nn.Module:
    """The network every loop trains: an MLP 32-64-10, or a CNN for 1x28x28 inputs."""
    if arch == "mlp":
        return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(32 * 7 * 7, 10),
    )


def net_forward(net: nn.Module, inputs: torch.Tensor, labels: Any, mode: str) -> Any:
    """The ``forward`` of both Runners' models: logits, or ``dict(loss=...)``."""
    logits = net(inputs)
    return {"loss": F.cross_entropy(logits, labels)} if mode == "loss" else logits


@MODELS.register_module()
class RunnerBenchNet(BaseModel):
    """``make_net(arch)`` as a runnerx model: ``dict(type='RunnerBenchNet', arch='mlp')``."""

    def __init__(self, arch: str = "mlp", data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor)
        self.net = make_net(arch)

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        """Logits, or ``dict(loss=cross_entropy)`` in 'loss' mode."""
        return net_forward(self.net, inputs, data_samples, mode)


def make_batches(arch: str, count: int = 64) -> list[dict[str, torch.Tensor]]:
    """``count`` collated batches of random inputs and labels (the same for every loop)."""
    batch_size, shape, _, _ = MODELS_INFO[arch]
    generator = torch.Generator().manual_seed(0)
    return [
        {
            "inputs": torch.randn(batch_size, *shape, generator=generator),
            "data_samples": torch.randint(0, 10, (batch_size,), generator=generator),
        }
        for _ in range(count)
    ]


class CycledBatches(DataLoader):
    """A DataLoader (so MMEngine accepts it) that cycles through precomputed batches forever:
    every loop pays the same, near-zero, data cost, and no Runner reaches an epoch end."""

    def __init__(self, batches: list) -> None:
        super().__init__(batches, batch_size=1)  # batch_size=1 gives MMEngine a batch sampler
        self.batches = batches

    def __iter__(self) -> Any:
        return itertools.cycle(self.batches)


class PlainLoop:
    """The hand-written loop: forward, cross-entropy, backward, SGD step, zero_grad."""

    def __init__(self, net: nn.Module, batches: list) -> None:
        self.net = net.train()
        self.optimizer = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
        self.batches = itertools.cycle(batches)

    def run(self, iters: int) -> float:
        """Train ``iters`` iterations; return the seconds they took."""
        net, optimizer, batches = self.net, self.optimizer, self.batches
        start = perf_counter()
        for _ in range(iters):
            batch = next(batches)
            loss = F.cross_entropy(net(batch["inputs"]), batch["data_samples"])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        return perf_counter() - start


class ChunkTimer:
    """Hook body (lowest priority): every ``chunk`` Runner iterations, note their time, then
    run ``chunk`` plain iterations on a copy of the weights taken at before_train."""

    priority = "LOWEST"

    def __init__(self, arch: str, batches: list, chunk: int) -> None:
        self.arch, self.batches, self.chunk = arch, batches, chunk
        self.runner_times: list[float] = []
        self.plain_times: list[float] = []

    def before_train(self, runner: Any) -> None:
        """Copy the model's initial weights into the plain loop's net; start the clock."""
        self.model_net = runner.model.net
        net = make_net(self.arch)
        net.load_state_dict(self.model_net.state_dict())
        self.plain = PlainLoop(net, self.batches)
        self._count = 0
        self._start = perf_counter()

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        """At the end of a chunk: note its time, then run a chunk of the plain loop."""
        self._count += 1
        if self._count % self.chunk:
            return
        self.runner_times.append(perf_counter() - self._start)
        self.plain_times.append(self.plain.run(self.chunk))
        self._start = perf_counter()

    def same_weights(self) -> bool:
        """Whether the Runner's and the plain loop's weights are bitwise equal."""
        ours, theirs = self.model_net.state_dict(), self.plain.net.state_dict()
        return all(torch.equal(ours[key], theirs[key]) for key in ours)


class RunnerxChunkTimer(ChunkTimer, Hook):
    """ChunkTimer as a runnerx hook."""


@cache
def mmengine_classes() -> tuple[type, type] | None:
    """MMEngine's model and hook versions of the above, or None when it cannot be imported."""
    try:
        from mmengine.hooks import Hook as MMEngineHook
        from mmengine.model import BaseModel as MMEngineBaseModel
        from mmengine.runner import Runner  # noqa: F401  (imports what its Runner needs)
    except ImportError as error:
        print(f"(MMEngine's Runner is left out: {error})")
        return None

    class MMEngineBenchNet(MMEngineBaseModel):
        def __init__(self, arch: str) -> None:
            super().__init__()
            self.net = make_net(arch)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            return net_forward(self.net, inputs, data_samples, mode)

    class MMEngineChunkTimer(ChunkTimer, MMEngineHook):
        pass

    return MMEngineBenchNet, MMEngineChunkTimer


@cache
def devnull() -> Any:
    """Where the Runners' console lines go (their log files are written as usual); open for
    the whole process, since a logger keeps the stream it was created with."""
    return open(os.devnull, "w")


def build_runner(
    kind: str, arch: str, iters: int, work_dir: str, hooks: list, batches: list
) -> Any:
    """A runnerx or MMEngine Runner that trains ``arch`` on ``batches`` (cycled) for ``iters``
    iterations with the default hooks (logger interval 50, no checkpoints) and ``hooks``."""
    settings = dict(
        work_dir=os.path.join(work_dir, f"{kind}_{arch}_{time.monotonic_ns()}"),
        train_dataloader=CycledBatches(batches),
        train_cfg=dict(by_epoch=False, max_iters=iters, val_interval=iters + 1),
        optim_wrapper=dict(
            type="OptimWrapper", optimizer=dict(type="SGD", lr=LR, momentum=MOMENTUM)
        ),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=50), checkpoint=None),
        custom_hooks=hooks,
        log_processor=dict(by_epoch=False),
        randomness=dict(seed=0),
        experiment_name=f"bench_{kind}_{arch}_{time.monotonic_ns()}",
    )
    if kind == "runnerx":
        from runnerx.runner import Runner

        return Runner(model=dict(type="RunnerBenchNet", arch=arch), **settings)
    from mmengine.runner import Runner

    return Runner(model=mmengine_classes()[0](arch), **settings)


def train_interleaved(kind: str, arch: str, iters: int, chunk: int, work_dir: str) -> ChunkTimer:
    """Train with the ``kind`` Runner interleaved with the plain loop; return the timer."""
    hook_class = RunnerxChunkTimer if kind == "runnerx" else mmengine_classes()[1]
    timer = hook_class(arch, make_batches(arch), chunk)
    with contextlib.redirect_stdout(devnull()), contextlib.redirect_stderr(devnull()):
        build_runner(kind, arch, iters, work_dir, [timer], timer.batches).train()
    return timer


def overhead_table(runs: dict[tuple[str, str], ChunkTimer]) -> None:
    """Print the weight checks, then per-iteration times and overheads."""
    for (kind, arch), timer in runs.items():
        steps = len(timer.runner_times) * timer.chunk
        verdict = "equal" if timer.same_weights() else "DIFFERENT: the comparison is invalid"
        print(f"check: {kind} and plain {arch.upper()} weights after {steps} steps are {verdict}")
    print("\n1. Overhead per training iteration against the plain loop, interleaved in one process")
    header = (
        f"{'model':<17}{'Runner':<9}{'chunks':>11}{'plain us/it':>12}{'Runner us/it':>13}"
        f"{'+us/it':>8}{'overhead':>9}{'IQR':>17}{'all-time':>9}  goal / issue"
    )
    print(header + "\n" + "-" * len(header))
    for (kind, arch), timer in runs.items():
        batch_size, shape, goal, issue = MODELS_INFO[arch]
        ours, plain, chunk = timer.runner_times, timer.plain_times, timer.chunk
        ratios = [(r / p - 1) * 100 for r, p in zip(ours, plain)]
        low, median, high = statistics.quantiles(ratios, n=4)
        extra = statistics.median(r - p for r, p in zip(ours, plain)) / chunk * 1e6
        note = f"goal <= {goal:g}%" if kind == "runnerx" else f"issue: MMEngine {issue}"
        print(
            f"{arch.upper() + ' ' + 'x'.join(map(str, shape)) + f' b{batch_size}':<17}"
            f"{kind:<9}{f'{len(ratios)}x{chunk}':>11}"
            f"{statistics.median(plain) / chunk * 1e6:>12.1f}"
            f"{statistics.median(ours) / chunk * 1e6:>13.1f}{extra:>8.1f}{median:>+8.1f}%"
            f"{f'{low:+.1f}..{high:+.1f}%':>17}{(sum(ours) / sum(plain) - 1) * 100:>+8.1f}%  {note}"
        )
    print(
        "(medians over chunks: per-iteration times, the paired difference (+us/it) and the paired "
        "ratio (overhead, with its interquartile range); all-time: total Runner time over total "
        "plain time, which also counts rare pauses such as full garbage collections)"
    )


def growth_table(runs: dict[tuple[str, str], ChunkTimer], iters: int) -> None:
    """Print each MLP run's it/s over its first and its last WINDOW iterations."""
    first, last = f"0-{WINDOW // 1000}k", f"{(iters - WINDOW) // 1000}k-{iters // 1000}k"
    print(f"\n2. It/s over one {iters:,}-iteration MLP run (from the median chunk of each window)")
    header = (
        f"{'Runner':<9}{'Runner ' + first:>13}{'Runner ' + last:>16}{'change':>9}"
        f"{'plain ' + first:>13}{'plain ' + last:>15}{'change':>9}"
    )
    print(header + "\n" + "-" * len(header))
    for (kind, arch), timer in runs.items():
        if arch != "mlp":
            continue
        n = WINDOW // timer.chunk
        cells = []
        for times in (timer.runner_times, timer.plain_times):
            start, end = (timer.chunk / statistics.median(t) for t in (times[:n], times[-n:]))
            cells.append(f"{start:>13.0f}{end:>15.0f}{(end / start - 1) * 100:>+8.1f}%")
        print(f"{kind:<9} {cells[0]}{cells[1]}")


class ProfiledTraining(Hook):
    """Profiles from before_train to after_train (so start-up is left out)."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.profiler = cProfile.Profile()

    def before_train(self, runner: Any) -> None:
        """Start profiling."""
        self.profiler.enable()

    def after_train(self, runner: Any) -> None:
        """Stop profiling."""
        self.profiler.disable()


def profile_runner(iters: int, work_dir: str, top: int = 30) -> None:
    """Print what costs the runnerx MLP loop most, in us per iteration (cProfile's own cost
    inflates every Python call, so read the ranking, not the absolute numbers)."""
    hook = ProfiledTraining()
    with contextlib.redirect_stdout(devnull()):
        build_runner("runnerx", "mlp", iters, work_dir, [hook], make_batches("mlp")).train()
    stats = pstats.Stats(hook.profiler).stats  # (file, line, name) -> (_, calls, own, cum, _)
    rows = sorted(stats.items(), key=lambda item: item[1][2], reverse=True)[:top]
    print(f"cProfile of the runnerx MLP Runner loop, {iters} iterations (* marks runnerx code)")
    print(f"{'own us/it':>10}{'cum us/it':>10}{'calls/it':>9}  function")
    for (file, line, name), (_, calls, own, cumulative, _) in rows:
        ours = file.startswith(str(ROOT / "runnerx"))
        where = f"{os.path.relpath(file, ROOT) if ours else os.path.basename(file)}:{line}"
        print(
            f"{own / iters * 1e6:>10.2f}{cumulative / iters * 1e6:>10.2f}{calls / iters:>9.2f}"
            f" {'*' if ours else ' '}{name} ({where})"
        )
    framework = sum(v[2] for k, v in stats.items() if k[0].startswith(str(ROOT / "runnerx")))
    print(f"own time in runnerx code: {framework / iters * 1e6:.1f} us/it (profiled)")


def main() -> None:
    """Parse the flags, run the benchmarks and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mlp-iters", type=int, default=40_000, help="length of the MLP runs")
    parser.add_argument("--cnn-iters", type=int, default=3_000, help="length of the CNN runs")
    parser.add_argument("--mlp-chunk", type=int, default=100, help="MLP iterations per chunk")
    parser.add_argument("--cnn-chunk", type=int, default=20, help="CNN iterations per chunk")
    parser.add_argument(
        "--startup-runs", type=int, default=8, help="start-up runs of each (0: skip)"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="torch threads, 0 for torch's default (see docs)"
    )
    parser.add_argument("--no-mmengine", action="store_true", help="leave MMEngine's Runner out")
    parser.add_argument("--profile", action="store_true", help="only profile the runnerx MLP loop")
    args = parser.parse_args()
    if WINDOW % args.mlp_chunk or args.mlp_iters % args.mlp_chunk or args.mlp_iters < 2 * WINDOW:
        parser.error(f"--mlp-chunk must divide {WINDOW} and --mlp-iters (at least {2 * WINDOW})")
    if args.cnn_iters % args.cnn_chunk or args.cnn_iters < 4 * args.cnn_chunk:
        parser.error("--cnn-chunk must divide --cnn-iters (at least 4 chunks)")
    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory(prefix="runnerx_bench_") as work_dir:
        if args.profile:
            profile_runner(20_000, work_dir)
            return
        print(
            f"{time.strftime('%Y-%m-%d')}: torch {torch.__version__}, {os.cpu_count()} CPUs, "
            f"{torch.get_num_threads()} torch threads, Python {sys.version.split()[0]}"
        )
        kinds = ["runnerx"] + ([] if args.no_mmengine or not mmengine_classes() else ["mmengine"])
        plan = {"mlp": (args.mlp_iters, args.mlp_chunk), "cnn": (args.cnn_iters, args.cnn_chunk)}
        runs = {
            (kind, arch): train_interleaved(kind, arch, *plan[arch], work_dir)
            for arch in plan
            for kind in kinds
        }
        overhead_table(runs)
        growth_table(runs, args.mlp_iters)
        if args.startup_runs:
            startup_table(args.startup_runs, work_dir)


if __name__ == "__main__":
    main()
