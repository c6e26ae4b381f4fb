"""The divergence warning's wording: checked on logging iterations, it says "by iteration N"
and the first non-finite iteration the history shows, and names both causes (the training or
the data)."""

from __future__ import annotations

import os

from tests.hooks.test_hooks_logger import DivergingLine
from tests.hooks.test_hooks_with_runner import make_runner


def test_the_warning_names_the_first_non_finite_iteration_and_both_causes(tmp_path):
    runner = make_runner(
        tmp_path,
        model=DivergingLine(3),  # NaN from step 3; checked when logged, at 4
        default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=2)),
    )
    runner.train()
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        (line,) = [line for line in file if "training has diverged" in line]
    assert "loss=nan by iteration 4 (not finite since iteration 3): training has diverged" in line
    assert "or a batch held NaN/inf values" in line
    assert "For a divergence, a lower learning rate" in line
