"""A Runner that trains (or tests) a toy model and fails midway, for the trackers' tests."""

import uuid

import pytest

from runnerx.hooks import Hook
from runnerx.runner import Runner
from runnerx.testing.toy import ToyDataset, ToyMetric, ToyModel


class RaiseAtIteration(Hook):
    """Raises ``error`` after the second training or test iteration."""

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if batch_idx == 1:
            raise self.error

    def after_test_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if batch_idx == 1:
            raise self.error


@pytest.fixture
def failing_run(tmp_path):
    """A function ``(vis_backends, error, stage='train')``: trains (or tests) a toy model for
    4 iterations, logging each, with a hook that raises ``error`` after the second (None:
    none does); returns the Runner once ``train``/``test`` has raised ``error`` (or
    returned)."""

    def run(vis_backends: list, error: BaseException | None, stage: str = "train") -> Runner:
        loader = dict(dataset=ToyDataset(), sampler=dict(type="DefaultSampler"), batch_size=3)
        runner = Runner(
            model=ToyModel(),
            work_dir=str(tmp_path / "work"),
            experiment_name=f"failing_{uuid.uuid4().hex}",
            train_dataloader=loader,
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
            train_cfg=dict(by_epoch=True, max_epochs=1),
            test_dataloader=loader,
            test_cfg=dict(),
            test_evaluator=ToyMetric(),
            default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=1)),
            custom_hooks=[] if error is None else [RaiseAtIteration(error)],
            visualizer=dict(type="Visualizer", vis_backends=vis_backends),
        )
        if error is None:
            getattr(runner, stage)()
        else:
            with pytest.raises(type(error)):
                getattr(runner, stage)()
        return runner

    return run
