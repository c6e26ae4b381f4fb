"""runner.val() on a Runner built from a training config, before train() has built its
parameter schedulers (a script that loads a checkpoint and validates)."""

import pytest

from runnerx.runner import Runner


@pytest.mark.parametrize(
    "param_scheduler",
    [dict(type="MultiStepLR", milestones=[2]), [dict(type="MultiStepLR", milestones=[2])]],
)
def test_val_before_train_validates_with_the_schedulers_unbuilt(digits_cfg, param_scheduler):
    digits_cfg.param_scheduler = param_scheduler
    metrics = Runner.from_cfg(digits_cfg).val()
    assert metrics["accuracy/top1"] > 0
