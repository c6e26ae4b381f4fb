"""A scheduler acting on validation metrics (ReduceOnPlateauLR) in a run that validates only
after training, or never, keeps its lr: named once when training starts."""

import pytest

from runnerx.evaluator import BaseMetric
from tests.hooks.test_hooks_param_scheduler_ends import warnings_of
from tests.hooks.test_hooks_with_runner import Points, make_runner

PLATEAU = dict(type="ReduceOnPlateauLR", monitor="loss", patience=0, factor=0.1)
ACTS_ONLY_AFTER = (
    "param_scheduler[0] (type='ReduceOnPlateauLR', monitor='loss') acts only after "
    "validations, on their metrics, but "
)


class FlatLoss(BaseMetric):
    """The same 'loss' at every validation: a plateau from the second one on."""

    def process(self, data_batch, data_samples):
        self.results.append(1.0)

    def compute_metrics(self, results):
        return {"loss": 1.0}


def validating(**train_cfg):
    """Runner arguments for a run with validation and ``train_cfg``."""
    return dict(
        val_dataloader=dict(dataset=Points(), sampler=dict(type="DefaultSampler"), batch_size=4),
        val_cfg=dict(),
        val_evaluator=FlatLoss(),
        train_cfg=dict(by_epoch=True, **train_cfg),
    )


def last_lr(runner):
    return runner.optim_wrapper.get_lr()["lr"][0]


def test_a_run_without_validation_names_the_scheduler_and_its_monitor(tmp_path):
    runner = make_runner(tmp_path, param_scheduler=PLATEAU)
    runner.train()
    assert warnings_of(runner) == [
        f"{ACTS_ONLY_AFTER}this run has no validation (no val_dataloader, val_cfg and "
        "val_evaluator): it never changes the lr (nor would MMEngine's); add validation whose "
        "metrics hold its monitor, or use a schedule that needs no metrics"
    ]
    assert last_lr(runner) == 0.1  # what it says


@pytest.mark.parametrize(
    "train_cfg, why",
    [
        (
            dict(max_epochs=3, val_interval=5),
            "the only validation runs after the last epoch (3), once training is over "
            "(train_cfg.val_begin=1, val_interval=5)",
        ),
        (
            dict(max_epochs=3, val_interval=1, dynamic_intervals=[(3, 1)], val_begin=3),
            "the only validation runs after the last epoch (3), once training is over "
            "(train_cfg.val_begin=3, val_interval=1)",
        ),
        (dict(max_epochs=2, val_begin=3), "train_cfg.val_begin=3 is after the last epoch (2)"),
    ],
    ids=["val_interval_past_the_end", "val_begin_at_the_end", "val_begin_past_the_end"],
)
def test_a_run_validating_only_at_or_after_its_end_says_why(tmp_path, train_cfg, why):
    runner = make_runner(tmp_path, param_scheduler=PLATEAU, **validating(**train_cfg))
    runner.train()
    ours = [message for message in warnings_of(runner) if message.startswith(ACTS_ONLY_AFTER)]
    assert ours == [
        f"{ACTS_ONLY_AFTER}{why}: it never changes the lr (nor would MMEngine's); validate "
        "while training: lower train_cfg.val_begin or val_interval, or use a schedule that "
        "needs no metrics"
    ]
    assert last_lr(runner) == 0.1


@pytest.mark.parametrize(
    "train_cfg, lr",
    [
        (dict(max_epochs=3), 0.01),  # validations 1 and 2 used: one plateau
        (dict(max_epochs=4, val_interval=10, dynamic_intervals=[(2, 1)]), 0.01),  # 2 and 3
        (dict(max_epochs=3, val_begin=3, val_check_interval=0.25), 0.001),  # 3 mid-epoch
    ],
    ids=["every_epoch", "dynamic_interval", "mid_epoch_checks_in_the_last_epoch"],
)
def test_a_run_validating_while_training_says_nothing_and_the_lr_drops(tmp_path, train_cfg, lr):
    """The validation after the last epoch is not used (the default end is max_epochs), so
    the first one used sets the best and each later one is a plateau."""
    runner = make_runner(tmp_path, param_scheduler=PLATEAU, **validating(**train_cfg))
    runner.train()
    assert warnings_of(runner) == []
    assert last_lr(runner) == pytest.approx(lr)
