"""The loops that tools/benchmark_runner.py times: a hand-written PyTorch loop, runnerx's
Runner and MMEngine's Runner, training the same network on the same data (see
``runner_data``: a DataLoader over a dataset, or precomputed batches).

A Runner gets a hook of the lowest priority (:class:`ChunkTimer`) that, after every ``chunk``
of its iterations, notes their time and runs ``chunk`` iterations of the plain loop, so both
share the process, its caches and the machine's load at that moment.
"""

from __future__ import annotations

import contextlib
import os
import time
from functools import cache
from time import perf_counter
from typing import Any

import torch
import torch.nn.functional as F
from benchmarks.runner_data import SEED, plain_batches, runner_data_settings
from torch import nn

from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.registry import MODELS

LR, MOMENTUM = 0.01, 0.9


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
    """The ``forward`` of the Runners' models: logits, or ``dict(loss=...)``."""
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


@MODELS.register_module()
class PlainStepBenchNet(RunnerBenchNet):
    """RunnerBenchNet whose ``train_step`` is the plain loop's code: in a Runner without hooks
    it measures the floor, what the bare loop and the measuring method cost."""

    def train_step(self, data: dict, optim_wrapper: Any) -> dict:
        """The plain loop's step, on the Runner's optimizer."""
        loss = F.cross_entropy(self.net(data["inputs"]), data["data_samples"])
        loss.backward()
        optim_wrapper.optimizer.step()
        optim_wrapper.optimizer.zero_grad()
        return {}


class PlainLoop:
    """The hand-written loop: forward, cross-entropy, backward, SGD step, zero_grad."""

    def __init__(self, net: nn.Module, batches: Any, optimizer: Any = None) -> None:
        self.net = net.train()
        self.optimizer = optimizer or torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
        self.batches = batches  # an endless iterator, which keeps its place between runs

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
    run ``chunk`` plain iterations: on a copy of the initial weights with an optimizer of its
    own, or, with ``shared``, on the Runner's own network and optimizer (the same tensors in
    the same memory, so that only the code path differs). The plain loop reads ``mode``'s
    data from what the Runner reads (the same batches, or the same dataset)."""

    priority = "LOWEST"

    def __init__(self, arch: str, mode: str, chunk: int, shared: bool = False) -> None:
        self.arch, self.mode, self.chunk, self.shared = arch, mode, chunk, shared
        self.runner_times: list[float] = []
        self.plain_times: list[float] = []

    def before_train(self, runner: Any) -> None:
        """Set up the plain loop; start the clock."""
        self.model_net = runner.model.net
        batches = plain_batches(self.mode, runner.train_dataloader)
        if self.shared:
            self.plain = PlainLoop(self.model_net, batches, runner.optim_wrapper.optimizer)
        else:
            net = make_net(self.arch)
            net.load_state_dict(self.model_net.state_dict())
            self.plain = PlainLoop(net, batches)
        self._count = 0
        self._start = perf_counter()

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
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


def build_runner(kind: str, arch: str, mode: str, iters: int, work_dir: str, hooks: list) -> Any:
    """A Runner that trains ``arch`` on ``mode``'s data for ``iters`` iterations with
    ``hooks``: ``kind`` 'runnerx' or 'mmengine' with the default hooks (logger interval 50,
    no checkpoints), or 'floor', runnerx's without hooks running PlainStepBenchNet."""
    default_hooks = dict(logger=dict(type="LoggerHook", interval=50), checkpoint=None)
    if kind == "floor":
        names = ("runtime_info", "timer", "sampler_seed", "logger", "param_scheduler", "preemption")
        default_hooks = dict.fromkeys((*names, "checkpoint"))
    settings = dict(
        work_dir=os.path.join(work_dir, f"{kind}_{arch}_{time.monotonic_ns()}"),
        **runner_data_settings(mode, arch, iters),
        optim_wrapper=dict(
            type="OptimWrapper", optimizer=dict(type="SGD", lr=LR, momentum=MOMENTUM)
        ),
        default_hooks=default_hooks,
        custom_hooks=hooks,
        randomness=dict(seed=SEED),
        experiment_name=f"bench_{kind}_{arch}_{time.monotonic_ns()}",
    )
    if kind != "mmengine":
        from runnerx.runner import Runner

        model_type = "PlainStepBenchNet" if kind == "floor" else "RunnerBenchNet"
        return Runner(model=dict(type=model_type, arch=arch), **settings)
    from mmengine.runner import Runner

    return Runner(model=mmengine_classes()[0](arch), **settings)


def train_interleaved(
    kind: str, arch: str, mode: str, iters: int, chunk: int, work_dir: str, shared: bool = True
) -> ChunkTimer:
    """Train with the ``kind`` Runner interleaved with the plain loop; return the timer."""
    hook_class = mmengine_classes()[1] if kind == "mmengine" else RunnerxChunkTimer
    timer = hook_class(arch, mode, chunk, shared)
    with contextlib.redirect_stdout(devnull()), contextlib.redirect_stderr(devnull()):
        build_runner(kind, arch, mode, iters, work_dir, [timer]).train()
    return timer


def same_weights_after(kind: str, arch: str, mode: str, steps: int, work_dir: str) -> bool:
    """Whether the ``kind`` Runner and the plain loop, from the same initial weights and on
    the same data in the same order, end with bitwise equal weights after ``steps`` steps."""
    timer = train_interleaved(kind, arch, mode, steps, steps, work_dir, shared=False)
    return timer.same_weights()
