"""Benchmark: Config.fromfile against mmengine-lite's, and `import runnerx` against `import torch`.

    python tools/benchmark_config.py [--repeats 50] [--import-repeats 10]

Both loaders read the same inheritance trees in the same process, interleaved, and the
medians are printed side by side. Start-up is timed as whole processes (`python -c ...`),
interleaved too. Needs mmengine-lite (`pip install -e ".[tests]"`).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = {
    "configs/digits_convnet.py (5 files)": ROOT / "configs/digits_convnet.py",
    "mmdet-like faster_rcnn_r101 (6 files)": (
        ROOT / "tests/config/data/mm/faster_rcnn_r101_fpn_2x_voc.py"
    ),
    "5-level chain with _delete_ (5 files)": ROOT / "tests/config/data/deep/level4.py",
}


def time_call(function, *args) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def bench_fromfile(repeats: int) -> list[tuple[str, float, float]]:
    """Median seconds of runnerx's and mmengine's Config.fromfile for each tree."""
    from mmengine.config import Config as MMConfig

    from runnerx import Config

    rows = []
    for name, path in TREES.items():
        assert Config.fromfile(path).to_dict() == MMConfig.fromfile(path).to_dict(), name
        ours, theirs = [], []
        for _ in range(repeats):
            ours.append(time_call(Config.fromfile, path))
            theirs.append(time_call(MMConfig.fromfile, path))
        rows.append((name, statistics.median(ours), statistics.median(theirs)))
    return rows


def bench_imports(repeats: int) -> dict[str, float]:
    """Median wall seconds of a fresh interpreter running each import statement."""
    statements = {
        "import torch": "import torch",
        "import runnerx": "import runnerx",
        "import runnerx, torch": "import runnerx, torch",
    }
    times: dict[str, list[float]] = {name: [] for name in statements}
    for _ in range(repeats):
        for name, statement in statements.items():
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", statement], check=True, cwd=ROOT)
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    """Run both benchmarks and print the tables."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--import-repeats", type=int, default=10)
    args = parser.parse_args()
    warnings.simplefilter("ignore")

    print(f"Config.fromfile, median of {args.repeats} (interleaved, same process)")
    print(f"{'tree':42} {'runnerx':>10} {'mmengine':>10} {'speed-up':>9}")
    for name, ours, theirs in bench_fromfile(args.repeats):
        print(f"{name:42} {ours * 1e3:8.2f}ms {theirs * 1e3:8.2f}ms {theirs / ours:8.1f}x")

    print(f"\nStart-up, whole process, median of {args.import_repeats} (interleaved)")
    imports = bench_imports(args.import_repeats)
    for name, seconds in imports.items():
        print(f"{name:42} {seconds:8.3f}s")
    extra = imports["import runnerx"] - imports["import torch"]
    print(f"{'import runnerx minus import torch':42} {extra:+8.3f}s  (goal: at most +0.150s)")


if __name__ == "__main__":
    main()
