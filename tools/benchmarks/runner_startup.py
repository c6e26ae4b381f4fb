"""Start-up of ``tools/train.py configs/digits_convnet.py`` against a plain PyTorch twin.

Each run is a whole process; the parent notes the time just before starting it and the child
prints the time when its first training iteration begins, then exits at once. For
``tools/train.py`` the child is told to do so by a config that inherits the example config
and adds a hook (from a module on PYTHONPATH, loaded by ``custom_imports``); the twin is a
script that loads the same data and builds the same model, optimizer and warm-up by hand.

runnerx's bytecode is compiled first, as a previous run or a non-editable ``pip install``
leaves it and as torch's and scikit-learn's already are. Without that, an editable install
under ``PYTHONDONTWRITEBYTECODE=1`` (set on these machines, and in many Docker images)
compiles runnerx's ~220 modules from source on every start.
"""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MARK = "FIRST_TRAIN_ITER"
MARK_HOOK = f'''
import os, time
from runnerx.hooks import Hook
from runnerx.registry import HOOKS

@HOOKS.register_module()
class FirstTrainIterMark(Hook):
    priority = "HIGHEST"

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        print("{MARK}", repr(time.time()), flush=True)
        os._exit(0)
'''
MARK_CONFIG = """
_base_ = {base!r}
custom_imports = dict(imports=['bench_first_iter_mark'], allow_failed_imports=False)
custom_hooks = [dict(type='FirstTrainIterMark')]
"""
# configs/digits_convnet.py written by hand: the same data split, model, optimizer and warm-up.
PLAIN_TWIN = f"""
import os, time
import torch
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
digits = load_digits()
images = torch.as_tensor(digits.images, dtype=torch.float32).div_(16.0).unsqueeze(1)
labels = torch.as_tensor(digits.target, dtype=torch.int64)
order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(0))
cut = len(labels) - round(len(labels) * 0.2)
train, val = order[:cut], order[cut:]
loader = DataLoader(TensorDataset(images[train], labels[train]), batch_size=64, shuffle=True)
val_loader = DataLoader(TensorDataset(images[val], labels[val]), batch_size=256)
model = nn.Sequential(
    nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(inplace=True), nn.Conv2d(16, 32, 3, padding=1),
    nn.ReLU(inplace=True), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 4 * 4, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
warmup = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.1, total_iters=20)
model.train()
inputs, targets = next(iter(loader))
print("{MARK}", repr(time.time()), flush=True)
nn.functional.cross_entropy(model(inputs), targets).backward()
optimizer.step()
optimizer.zero_grad()
warmup.step()
os._exit(0)
"""


def seconds_to_first_iter(command: list[str], env: dict[str, str]) -> float:
    """Seconds from just before ``command`` starts to the mark it prints."""
    start = time.time()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    marks = [line for line in done.stdout.splitlines() if line.startswith(MARK)]
    if done.returncode != 0 or not marks:
        raise RuntimeError(f"{command} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return float(marks[0].split()[1]) - start


def startup_table(runs: int, work_dir: str) -> None:
    """Print the median start-up of tools/train.py and of its plain twin (runs alternate
    which goes first) and the median of their paired ratios."""
    folder = Path(work_dir)
    compileall.compile_dir(ROOT / "runnerx", quiet=1)
    (folder / "bench_first_iter_mark.py").write_text(MARK_HOOK)
    config = folder / "digits_first_iter.py"
    config.write_text(MARK_CONFIG.format(base=str(ROOT / "configs/digits_convnet.py")))
    (folder / "plain_twin.py").write_text(PLAIN_TWIN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(folder), str(ROOT)]))
    train = [sys.executable, "tools/train.py", str(config), "--work-dir", str(folder / "wd")]
    twin = [sys.executable, str(folder / "plain_twin.py")]
    ours: list[float] = []
    plain: list[float] = []
    for index in range(runs):
        for command in (train, twin) if index % 2 == 0 else (twin, train):
            (ours if command is train else plain).append(seconds_to_first_iter(command, env))
    ratio = statistics.median(o / p for o, p in zip(ours, plain))
    print(
        f"\n3. Start-up: process start to the first training iteration (median of {runs} runs, "
        "runnerx's bytecode compiled)"
    )
    rows = (
        ("python tools/train.py configs/digits_convnet.py", f"{statistics.median(ours):.2f} s"),
        ("plain PyTorch twin (same data, model, optimizer)", f"{statistics.median(plain):.2f} s"),
        ("ratio (median of paired runs)", f"{ratio:.2f}x   issue: MMEngine's tools 1.34x"),
    )
    for label, value in rows:
        print(f"{label:<50}{value}")
