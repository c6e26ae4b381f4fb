"""Accumulation windows restart at every epoch (runnerx's choice, for exact resume from
epoch-end checkpoints); where that makes an epoch end with a shorter window than MMEngine
would, the run's log says so once, as training starts."""

import uuid
from pathlib import Path

import pytest

from runnerx.model import BaseModel
from runnerx.runner import Runner
from tests.checkpoint.tiny_data import loader
from tests.optim import oracle_net

MESSAGE = "does not divide the 4 iterations of an epoch"


def train_log(tmp_path, accumulative_counts: int, max_epochs: int = 2) -> str:
    """The log of a run of ``max_epochs`` (4 iterations each) with ``accumulative_counts``."""
    runner = Runner(
        model=oracle_net.model_class(BaseModel)(),
        work_dir=str(tmp_path),
        train_dataloader=loader(shuffle=False),
        train_cfg={"by_epoch": True, "max_epochs": max_epochs},
        optim_wrapper={
            "optimizer": {"type": "SGD", "lr": 0.1},
            "accumulative_counts": accumulative_counts,
        },
        default_hooks={"logger": {"type": "LoggerHook", "interval": 100}, "checkpoint": None},
        experiment_name=f"accumulation_{uuid.uuid4().hex}",
    )
    runner.train()
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def test_an_epoch_length_that_is_no_multiple_of_the_window_is_logged_once(tmp_path):
    log = train_log(tmp_path, accumulative_counts=3)
    assert log.count(MESSAGE) == 1
    line = next(line for line in log.splitlines() if MESSAGE in line)
    assert " - INFO - optim_wrapper.accumulative_counts=3 " in line
    assert "ends with a window of 1 iteration(s) (its loss divided by 1, not 3)" in line
    assert "MMEngine's windows run across epochs" in line
    # the model has batch norm: warned about in the log too, as MMEngine's print_log does
    [warning] = [line for line in log.splitlines() if " - WARNING - " in line]
    assert "the model has BatchNorm layers: with gradient accumulation" in warning


@pytest.mark.parametrize("accumulative_counts", [1, 2, 4])
def test_windows_that_fit_the_epoch_are_not_logged(tmp_path, accumulative_counts):
    assert MESSAGE not in train_log(tmp_path, accumulative_counts)


def test_a_run_of_one_epoch_is_not_logged(tmp_path):
    """Its only epoch end is the run's end, where MMEngine's last window ends too."""
    assert MESSAGE not in train_log(tmp_path, accumulative_counts=3, max_epochs=1)
