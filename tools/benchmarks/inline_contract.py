"""The least a training loop that keeps MMEngine's model contract and default logging can add
to a plain PyTorch loop: that contract and bookkeeping written inline, in one function, with
no Runner, hooks, MessageHub or LogProcessor (tools/benchmark_in_situ.py times it).

Each part can be left out, to see what it costs:

- ``contract``: the batch as a dict of keyword arguments, ``forward(**data, mode='loss')``
  returning ``dict(loss=...)``, and the detached loss as the log variable;
- ``recording``: the iteration count, learning rate, data time, loss tensor and iteration
  time kept in lists (what RuntimeInfoHook and IterTimerHook record);
- ``logging``: every 50 iterations, the losses read as floats, window means of the last 10
  values, one line through a ``logging.Logger`` to a file and a null console, and one JSON
  line (what LoggerHook, LogProcessor and the visualizer do).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from time import perf_counter
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

PARTS = ("contract", "recording", "logging")
LOG_INTERVAL, WINDOW = 50, 10


class InlineContractLoop:
    """Trains ``net`` with ``optimizer`` on ``batches`` (dicts of 'inputs', 'data_samples'),
    doing the ``parts`` of the Runner's per-iteration work inline; logs into ``log_dir``."""

    def __init__(
        self,
        net: nn.Module,
        optimizer: torch.optim.Optimizer,
        batches: Iterator[dict],
        parts: tuple[str, ...],
        log_dir: str,
    ) -> None:
        self.net, self.optimizer, self.batches = net, optimizer, batches
        self.contract, self.recording = "contract" in parts, "recording" in parts
        self.logging = "logging" in parts
        self.iter, self.last = 0, perf_counter()
        self.history: dict[str, list] = {"lr": [], "data_time": [], "time": [], "loss": []}
        self.logger = logging.Logger(f"inline_{id(self)}")
        self.logger.propagate = False
        console = logging.StreamHandler(open(os.devnull, "w"))  # noqa: SIM115 (open for the run)
        log_file = logging.FileHandler(os.path.join(log_dir, f"inline_{id(self)}.log"))
        formatter = logging.Formatter("%(asctime)s - %(name)s - %(levelname)s - %(message)s")
        for handler in (console, log_file):
            handler.setFormatter(formatter)
            self.logger.addHandler(handler)
        self.scalars = open(os.path.join(log_dir, f"inline_{id(self)}.json"), "a")  # noqa: SIM115

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        """The model contract's forward: logits, or ``dict(loss=...)`` in 'loss' mode."""
        logits = self.net(inputs)
        return {"loss": F.cross_entropy(logits, data_samples)} if mode == "loss" else logits

    def run(self, iters: int) -> float:
        """Train ``iters`` iterations; returns the seconds they took."""
        optimizer, groups, history = self.optimizer, self.optimizer.param_groups, self.history
        record_lr, record_data_time = history["lr"].append, history["data_time"].append
        record_loss, record_time = history["loss"].append, history["time"].append
        begin = perf_counter()
        for _ in range(iters):
            batch = next(self.batches)
            if self.recording:
                start = perf_counter()
                record_lr(groups[0]["lr"])
                record_data_time(start - self.last)
            if self.contract:
                data = {"inputs": batch["inputs"], "data_samples": batch["data_samples"]}
                loss = self.forward(**data, mode="loss")["loss"]
                log_vars = {"loss": loss.detach()}
            else:
                loss = F.cross_entropy(self.net(batch["inputs"]), batch["data_samples"])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if self.recording:
                record_loss(log_vars["loss"] if self.contract else loss.detach())
                now = perf_counter()
                record_time(now - start)
                self.last = now
            self.iter += 1
            if self.logging and self.iter % LOG_INTERVAL == 0:
                self._log_line()
        return perf_counter() - begin

    def _log_line(self) -> None:
        values = {}
        for name, values_so_far in self.history.items():
            if not values_so_far:
                continue
            floats = [v if type(v) is float else v.item() for v in values_so_far[-WINDOW:]]
            values[name] = floats[-1] if name == "lr" else sum(floats) / len(floats)
            del values_so_far[:-WINDOW]
        line = f"Iter(train) [{self.iter}]  " + "  ".join(
            f"{name}: {value:.4e}" if name == "lr" else f"{name}: {value:.4f}"
            for name, value in values.items()
        )
        self.logger.info(line)
        self.scalars.write(json.dumps({**values, "step": self.iter}) + "\n")
        self.scalars.flush()
