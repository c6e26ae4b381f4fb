"""Small stand-ins for the Runner and its parts, and a loop that calls hook points in run order."""

from __future__ import annotations

import os
from collections import defaultdict
from types import SimpleNamespace

import pytest

from runnerx.config import Config


class FakeMessageHub:
    """Keeps every scalar update (the object given, unconverted) and the runtime info."""

    def __init__(self):
        self.scalars = defaultdict(list)
        self.runtime_info = {}

    def update_scalar(self, key, value, count=1):
        self.scalars[key].append(value)

    def update_scalars(self, values):
        for key, value in values.items():
            self.update_scalar(key, value)

    def update_info(self, key, value):
        self.runtime_info[key] = value

    def get_info(self, key, default=None):
        return self.runtime_info.get(key, default)

    def pop_info(self, key, default=None):
        return self.runtime_info.pop(key, default)

    @property
    def log_scalars(self):
        """MessageHub's HistoryBuffers: none here (CheckpointHook reads the losses' ones)."""
        return {}


class RecordingLogger:
    def __init__(self):
        self.records = []

    def info(self, message):
        self.records.append(("info", message))

    def warning(self, message):
        self.records.append(("warning", message))

    def messages(self, level=None):
        return [text for kind, text in self.records if level in (None, kind)]


def read(path):
    with open(path) as file:
        return file.read()


class CheckpointSaver:
    """runner.save_checkpoint: writes a real file and records the call and what was on disk."""

    def __init__(self, work_dir):
        self.work_dir = work_dir
        self.calls = []

    def __call__(
        self, out_dir, filename, save_optimizer=True, save_param_scheduler=True, meta=None
    ):
        os.makedirs(out_dir, exist_ok=True)
        last = os.path.join(self.work_dir, "last_checkpoint")
        self.calls.append(
            dict(
                out_dir=out_dir,
                filename=filename,
                save_optimizer=save_optimizer,
                save_param_scheduler=save_param_scheduler,
                meta=meta,
                files_before=sorted(n for n in os.listdir(out_dir) if n.endswith(".pth")),
                last_checkpoint_before=read(last) if os.path.exists(last) else None,
            )
        )
        with open(os.path.join(out_dir, filename), "w") as file:
            file.write(filename)

    @property
    def filenames(self):
        return [call["filename"] for call in self.calls]


@pytest.fixture
def runner(tmp_path):
    work_dir = tmp_path / "work_dirs" / "exp"
    log_dir = work_dir / "20240101_000000"
    log_dir.mkdir(parents=True)
    return SimpleNamespace(
        cfg=Config(dict(model=dict(type="Net"), seed=3)),
        cfg_text=Config(dict(model=dict(type="Net"), seed=3)).pretty_text,
        seed=3,
        experiment_name="exp_20240101_000000",
        timestamp="20240101_000000",
        work_dir=str(work_dir),
        log_dir=str(log_dir),
        epoch=0,
        iter=0,
        max_epochs=3,
        max_iters=12,
        message_hub=FakeMessageHub(),
        logger=RecordingLogger(),
        train_loop=SimpleNamespace(stop_training=False),
        train_dataloader=list(range(4)),
        val_dataloader=list(range(2)),
        test_dataloader=list(range(2)),
        param_schedulers=None,
        save_checkpoint=CheckpointSaver(str(work_dir)),
    )


def call(hooks, point, runner, **kwargs):
    """Call ``point`` on the hooks that act at it, as the Runner does."""
    for hook in hooks:
        if point in hook.overridden_points():
            getattr(hook, point)(runner, **kwargs)


@pytest.fixture
def train():
    """Drive hooks through an epoch-based training run (validating after each epoch when
    ``metrics`` gives that epoch's metrics)."""

    def run(runner, hooks, epochs=None, outputs=None, metrics=None):
        epochs = runner.max_epochs if epochs is None else epochs
        runner.max_iters = epochs * len(runner.train_dataloader)
        call(hooks, "before_run", runner)
        call(hooks, "before_train", runner)
        while runner.epoch < epochs:
            call(hooks, "before_train_epoch", runner)
            for batch_idx, batch in enumerate(runner.train_dataloader):
                call(hooks, "before_train_iter", runner, batch_idx=batch_idx, data_batch=batch)
                step_outputs = outputs(runner) if outputs else None
                call(
                    hooks,
                    "after_train_iter",
                    runner,
                    batch_idx=batch_idx,
                    data_batch=batch,
                    outputs=step_outputs,
                )
                runner.iter += 1
            call(hooks, "after_train_epoch", runner)
            runner.epoch += 1
            if metrics is not None:
                call(hooks, "before_val_epoch", runner)
                call(hooks, "after_val_epoch", runner, metrics=metrics(runner.epoch))
        call(hooks, "after_train", runner)
        call(hooks, "after_run", runner)

    return run
