"""Training on an IterableDataset given as a dataloader config (``sampler=None`` or no sampler,
as MMEngine passes None on), its mid-epoch resume, and the warning for an epoch that yields
fewer batches than ``len()`` says."""

# ruff: noqa: F811
from __future__ import annotations

import os

import pytest
import torch
from torch.utils.data import IterableDataset

from runnerx.hooks import Hook
from tests.checkpoint.conftest import make_runner  # noqa: F401 (fixture)
from tests.checkpoint.tiny_data import TinyData


class Stream(IterableDataset):
    """TinyData's 8 samples in order; ``__len__`` says 8; ``yields`` per pass (by pass)."""

    def __init__(self, yields=(8,)) -> None:
        self.yields, self.passes = list(yields), 0

    def __len__(self) -> int:
        return 8

    def __iter__(self):
        count = self.yields[min(self.passes, len(self.yields) - 1)]
        self.passes += 1
        data = TinyData()
        return (data[index] for index in range(count))


def stream_loader(dataset: IterableDataset, **sampler) -> dict:
    return {
        "dataset": dataset,
        "batch_size": 2,
        "collate_fn": {"type": "default_collate"},
        **sampler,
    }


def log_text(runner) -> str:
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        return file.read()


@pytest.mark.parametrize("sampler", [{"sampler": None}, {}])
def test_an_iterable_dataset_trains_from_a_config_without_a_sampler(make_runner, sampler):
    runner = make_runner(train_dataloader=stream_loader(Stream(), **sampler))
    runner.train()
    assert runner.iter == 8  # 2 epochs of len() = 4 batches
    assert "sampler is None: using" not in log_text(runner)  # no DefaultSampler claimed


def test_a_sampler_for_an_iterable_dataset_is_refused_naming_the_key(make_runner):
    loader = stream_loader(Stream(), sampler={"type": "DefaultSampler", "shuffle": True})
    with pytest.raises(ValueError, match=r"train_dataloader\.sampler=.*Stream, is an Iterable"):
        make_runner(train_dataloader=loader).train()


def test_an_iterable_dataset_resumes_mid_epoch_where_the_run_stood(make_runner, tmp_path):
    checkpoint = {"by_epoch": False, "interval": 2}
    torch.manual_seed(0)
    whole = make_runner(checkpoint=checkpoint, train_dataloader=stream_loader(Stream()))
    whole.train()
    torch.manual_seed(0)
    resumed = make_runner(
        checkpoint=checkpoint,
        train_dataloader=stream_loader(Stream()),
        work_dir=str(tmp_path / "resumed"),
        resume=True,
        load_from=os.path.join(whole.work_dir, "iter_6.pth"),  # batch 2 of epoch 2
    )
    resumed.train()
    assert resumed.iter == 8
    assert torch.equal(resumed.model.linear.weight, whole.model.linear.weight)


def short_warnings(runner) -> list[str]:
    return [line for line in log_text(runner).splitlines() if "batches len() gives it" in line]


def test_an_epoch_that_yields_fewer_batches_than_len_is_warned_once_at_its_end(make_runner):
    runner = make_runner(max_epochs=3, train_dataloader=stream_loader(Stream(yields=(8, 4, 0))))
    runner.train()
    assert runner.iter == 4 + 2 + 0
    warnings = short_warnings(runner)
    assert len(warnings) == 2  # epochs 2 and 3, once each
    assert "train_dataloader yielded 2 of the 4 batches len() gives it in epoch 2" in warnings[0]
    assert "yielded 0 of the 4 batches len() gives it in epoch 3 (at iteration 6)" in warnings[1]


class StopAt(Hook):
    """Sets the loop's ``flags`` after iteration ``at``."""

    def __init__(self, at: int, *flags: str) -> None:
        self.at, self.flags = at, flags

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            for flag in self.flags:
                setattr(runner.train_loop, flag, True)


@pytest.mark.parametrize(
    "settings",
    [
        {"custom_hooks": [StopAt(2, "stop_training")]},
        {"custom_hooks": [StopAt(2, "stop_training", "stop_now")]},  # as PreemptionHook
        {"train_cfg": {"by_epoch": True, "max_epochs": 2, "limit_batches": 2}},
        {"fast_dev_run": 2},
    ],
    ids=["stop_training", "stop_now", "limit_batches", "fast_dev_run"],
)
def test_an_epoch_ended_on_purpose_is_not_warned_of(make_runner, settings):
    runner = make_runner(**settings)
    runner.train()
    assert runner.iter in (2, 4)
    assert short_warnings(runner) == []


class UsedUp(Stream):
    """A generator made once: its first pass gives 4 samples, every later one none. An error
    after many passes, so that the test fails rather than hangs if the loop spins."""

    def __iter__(self):
        self.passes += 1
        if self.passes > 50:
            raise AssertionError("the loop kept asking for passes that give nothing")
        return iter(()) if self.passes > 1 else (TinyData()[index] for index in range(4))


def test_an_iteration_loop_over_a_used_up_stream_is_an_error_not_a_spin(make_runner):
    runner = make_runner(by_epoch=False, train_dataloader=stream_loader(UsedUp()))
    with pytest.raises(RuntimeError, match=r"train_dataloader gave no batch in a whole pass"):
        runner.train()
    assert runner.iter == 2  # the one pass's two batches were trained on


class ValidateFromHook(Hook):
    """Calls ``runner.val()`` after iteration 2 and notes the model's mode at every iteration."""

    def __init__(self) -> None:
        self.modes = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.modes.append(runner.model.training)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == 2:
            runner.val()


def test_a_validation_a_hook_runs_mid_training_leaves_the_model_training(make_runner):
    hook = ValidateFromHook()
    runner = make_runner(by_epoch=False, scores=[0.5] * 10, val_interval=100, custom_hooks=[hook])
    runner.train()
    assert hook.modes == [True] * runner.iter  # MMEngine's loop calls model.train() per batch
