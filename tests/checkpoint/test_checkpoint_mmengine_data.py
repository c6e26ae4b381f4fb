"""Where the training data continues after resuming a checkpoint without a data position
(MMEngine's): an iteration-based loop after the batches of the saved iterations, as MMEngine's
IterBasedTrainLoop does by reading them again; an epoch-based loop at the first batch of the
saved epoch, as MMEngine's EpochBasedTrainLoop does."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from runnerx.checkpoint import load_checkpoint
from runnerx.hooks import Hook
from tests.checkpoint.tiny_data import loader, sample_indices

HERE = Path(__file__).parent
NO_POSITION = "holds no data position (an MMEngine or weights-only checkpoint)"


class RecordBatches(Hook):
    """Keeps the sample indices of every training iteration: ``{iteration: [indices]}``."""

    def __init__(self) -> None:
        self.batches: dict[int, list[int]] = {}

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        self.batches[runner.iter + 1] = sample_indices(data_batch["inputs"])


def train(make_runner, sampler: str, max_iters: int, by_epoch: bool = False, **kwargs):
    """Train the checkpoint tests' TinyNet with ``sampler``: the runner, the batches it
    trained and its log."""
    dataloader = loader(shuffle=True)
    dataloader["sampler"]["type"] = sampler
    record = RecordBatches()
    loop = {"max_epochs": max_iters // 4} if by_epoch else {"max_iters": max_iters}
    runner = make_runner(
        train_dataloader=dataloader,
        train_cfg={"by_epoch": by_epoch, "val_interval": max_iters, **loop},
        custom_hooks=[record],
        **kwargs,
    )
    runner.train()
    return runner, record.batches, Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def without_position(path: Path) -> Path:
    """A copy of the runnerx checkpoint ``path`` shaped as MMEngine's: no data position and no
    random states."""
    checkpoint = load_checkpoint(path)
    del checkpoint["dataloader"], checkpoint["rng_states"]
    copy = path.with_name(f"mmengine_{path.name}")
    torch.save(checkpoint, copy)
    return copy


@pytest.fixture(scope="module")
def mmengine_runs(tmp_path_factory, run_in_repo) -> tuple[Path, dict]:
    """MMEngine's iteration-based checkpoints and the batches its resumed runs trained."""
    pytest.importorskip("mmengine")
    work_dir = tmp_path_factory.mktemp("mmengine_iter")
    result = run_in_repo(
        [sys.executable, str(HERE / "mmengine_iter_writer.py"), str(work_dir)], timeout=120
    )
    assert result.returncode == 0, result.stderr[-4000:]
    expected = json.loads((work_dir / "expected.json").read_text())
    return work_dir, {
        sampler: {int(k): v for k, v in runs.items()} for sampler, runs in expected.items()
    }


@pytest.mark.parametrize(
    ("sampler", "save_at", "max_iters", "randomness"),
    [
        ("InfiniteSampler", 2, 4, {"seed": 0}),
        ("DefaultSampler", 5, 7, {"seed": 0}),
        # no seed configured: the sampler takes the checkpoint's, so the order is still the run's
        ("DefaultSampler", 5, 7, {}),
    ],
)
def test_an_mmengine_iteration_checkpoint_continues_mmengines_data_stream(
    mmengine_runs, make_runner, sampler, save_at, max_iters, randomness
):
    work_dir, expected = mmengine_runs
    path = work_dir / sampler / f"iter_{save_at}.pth"
    _, batches, log = train(
        make_runner, sampler, max_iters, resume=str(path), randomness=randomness
    )
    assert batches == expected[sampler]  # the batches MMEngine's resumed run trained
    assert f"{NO_POSITION}: the training data stream continues after its first {save_at} " in log


def test_a_checkpoint_without_data_position_continues_the_stream(make_runner, tmp_path):
    """Also without MMEngine: a runnerx checkpoint stripped to MMEngine's shape resumes where
    the unbroken run was, in the second pass of a DefaultSampler."""
    checkpoint = {"type": "CheckpointHook", "by_epoch": False, "interval": 5}
    _, unbroken, _ = train(make_runner, "DefaultSampler", 7, checkpoint=checkpoint)
    path = without_position(tmp_path / "work" / "iter_5.pth")
    runner, batches, log = train(
        make_runner, "DefaultSampler", 7, resume=str(path), work_dir=str(tmp_path / "resumed")
    )
    assert batches == {6: unbroken[6], 7: unbroken[7]} and runner.iter == 7
    assert "continues after its first 5 batches (batch 2 of pass 2)" in log


def test_an_epoch_checkpoint_saved_mid_epoch_starts_that_epoch_over(make_runner, tmp_path):
    """As MMEngine's EpochBasedTrainLoop: the saved epoch starts at its first batch, in the
    order the unbroken run read it, and the iterations count on from the saved ones."""
    checkpoint = {"type": "CheckpointHook", "by_epoch": False, "interval": 6}
    _, unbroken, _ = train(make_runner, "DefaultSampler", 8, by_epoch=True, checkpoint=checkpoint)
    path = without_position(tmp_path / "work" / "iter_6.pth")
    runner, batches, log = train(
        make_runner,
        "DefaultSampler",
        8,
        by_epoch=True,
        resume=str(path),
        work_dir=str(tmp_path / "resumed"),
    )
    second_epoch = [unbroken[iteration] for iteration in (5, 6, 7, 8)]
    assert list(batches.values()) == second_epoch and list(batches) == [7, 8, 9, 10]
    assert (runner.epoch, runner.iter) == (2, 10)
    assert "epoch 2 starts at its first batch, as in MMEngine: the 2 batches of it" in log
