"""Persistent dataloader workers end with the run that started them: none is left alive after
``train()``, ``val()`` or a training that failed, and a later run starts new ones. (Left to the
garbage collector they lived on, and collecting the Runner stalled 5 s per worker.)"""

import gc
import multiprocessing
import time

import pytest

from runnerx.hooks import Hook
from runnerx.runner import Runner


class Fails(Exception):
    pass


class FailAtIter(Hook):
    def __init__(self, at: int) -> None:
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            raise Fails


def with_persistent_workers(cfg):
    cfg.train_cfg.max_epochs = 2
    cfg.param_scheduler = None
    for key in ("train_dataloader", "val_dataloader"):
        cfg[key] = dict(cfg[key], num_workers=2, persistent_workers=True)
    return cfg


def workers_alive() -> list:
    return multiprocessing.active_children()  # also reaps the ones that have ended


def test_train_then_val_leave_no_worker_alive_and_the_runner_is_collected_at_once(digits_cfg):
    runner = Runner.from_cfg(with_persistent_workers(digits_cfg))
    runner.train()
    assert workers_alive() == []
    first = runner.val()
    assert workers_alive() == []
    assert runner.val() == first  # new workers, the same validation

    del runner
    start = time.monotonic()
    gc.collect()
    assert time.monotonic() - start < 3  # was 5 s per worker


def test_a_failed_training_leaves_no_worker_alive(digits_cfg):
    runner = Runner.from_cfg(with_persistent_workers(digits_cfg))
    runner.register_hook(FailAtIter(30))  # in epoch 2, after a validation
    with pytest.raises(Fails):
        runner.train()
    assert workers_alive() == []
