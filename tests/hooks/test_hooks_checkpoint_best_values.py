"""save_best on a metric value that is not a real number is refused naming save_best, the key,
the value and its type; a 0-dim tensor or numpy scalar counts as its number."""

# ruff: noqa: F811
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

# fixture: the test functions' make_runner argument is it (hence the file-wide F811).
from tests.checkpoint.conftest import make_runner  # noqa: F401


@pytest.mark.parametrize(
    ("score", "shown"),
    [("not-a-number", r"'not-a-number' \(str\)"), (torch.tensor([0.5, 0.25]), r"tensor\(\[0.5000")],
)
def test_a_score_that_is_not_a_number_is_refused_naming_save_best(make_runner, score, shown):
    runner = make_runner(
        checkpoint={"interval": 1, "save_best": "scripted/score", "rule": "greater"}, scores=[score]
    )
    with pytest.raises(TypeError, match=r"CheckpointHook\.save_best='scripted/score'.*" + shown):
        runner.train()


@pytest.mark.parametrize("first", [torch.tensor(0.5), np.float32(0.5), torch.tensor([0.5])])
def test_a_tensor_or_numpy_score_counts_as_its_number(make_runner, first):
    runner = make_runner(
        checkpoint={"interval": 1, "save_best": "scripted/score", "rule": "greater"},
        scores=[first, 0.75],
    )
    runner.train()
    assert runner.message_hub.get_info("best_score") == 0.75
    assert type(runner.message_hub.get_info("best_score")) is float
    assert os.path.exists(os.path.join(runner.work_dir, "best_scripted_score_epoch_2.pth"))
