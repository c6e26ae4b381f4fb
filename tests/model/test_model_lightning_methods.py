"""LightningModule methods left on a runnerx model: nothing calls them, so the model build
warns once, naming each with the place its work goes."""

import logging

import torch
from torch.utils.data import DataLoader, TensorDataset

from runnerx.logging import logger as logger_module
from runnerx.model import build_model
from runnerx.model.lightning_methods import lightning_methods
from runnerx.runner import Runner
from tests.parallel.test_parallel_compile_given import Tiny


class Plain(Tiny):
    def test_step(self, data):  # runnerx's own step, overridden: not Lightning's
        return super().test_step(data)


class Ported(Plain):
    calls = []

    def training_step(self, batch, batch_idx):
        self.calls.append("training_step")

    def test_step(self, batch, batch_idx):
        self.calls.append("test_step")

    def configure_optimizers(self):
        self.calls.append("configure_optimizers")

    def on_train_epoch_end(self):
        self.calls.append("on_train_epoch_end")

    def on_validation_epoch_end(self):
        self.calls.append("on_validation_epoch_end")


def test_lightning_methods_name_the_runnerx_place_of_each():
    found = lightning_methods(Ported())
    assert list(found) == [
        "training_step",
        "configure_optimizers",
        "on_train_epoch_end",
        "on_validation_epoch_end",
        "test_step",
    ]
    assert found["configure_optimizers"] == "the optim_wrapper and param_scheduler keys"
    assert found["on_train_epoch_end"] == "a hook's after_train_epoch"
    assert lightning_methods(Plain()) == {}  # nn.Module's and BaseModel's methods do not count


def test_building_a_model_with_them_warns_once(monkeypatch, logged_warnings):
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("lightning_methods"))
    messages = logged_warnings("lightning_methods")
    model = Ported()
    build_model(build_model(model))  # the Runner builds twice
    build_model(torch.compile(Plain(), backend="eager"))
    assert len(messages) == 1
    assert messages[0].startswith("Ported defines LightningModule methods that runnerx never")
    assert "on_validation_epoch_end -> a metric's compute_metrics" in messages[0]
    assert "docs/lightning.md" in messages[0]
    build_model(torch.compile(Ported(), backend="eager"))  # the model inside counts
    assert len(messages) == 2


def test_a_run_logs_the_warning_and_calls_none_of_them(tmp_path):
    x = torch.randn(8, 4)
    runner = Runner(
        model=Ported(),
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=4),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(checkpoint=None),
    )
    runner.train()
    log = next(tmp_path.glob("*/*.log")).read_text()
    assert log.count("defines LightningModule methods") == 1
    assert "training_step -> forward(..., mode='loss')" in log
    assert Ported.calls == []
