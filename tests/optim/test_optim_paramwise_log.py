"""The default constructor logs, at INFO through the current logger, one MMEngine-style line per
parameter that paramwise_cfg gave settings (``paramwise_options -- name:key=value``), and
nothing when no rule applied; in a Runner the lines are in the run's log."""

import logging
from pathlib import Path

import pytest
from torch import nn

import runnerx.logging.logger as logger_module
from runnerx.optim import DefaultOptimWrapperConstructor, build_optim_wrapper
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS
from tests.hooks.test_hooks_with_runner import make_runner

OPTIMIZER = dict(type="SGD", lr=0.1, weight_decay=1e-4)
RULES = dict(norm_decay_mult=0.0, bias_lr_mult=2.0, custom_keys={"head": dict(lr_mult=0.5)})
EXPECTED = [
    "paramwise_options -- stem.0.bias:lr=0.2",
    "paramwise_options -- stem.1.weight:weight_decay=0.0",
    "paramwise_options -- stem.1.bias:weight_decay=0.0",
    "paramwise_options -- head.weight:lr=0.05, weight_decay=0.0001, lr_mult=0.5",
    "paramwise_options -- head.bias:lr=0.05, weight_decay=0.0001, lr_mult=0.5",
]


def net():
    model = nn.Module()
    model.stem = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4))
    model.head = nn.Linear(4, 2)
    return model


@OPTIM_WRAPPER_CONSTRUCTORS.register_module(force=True)
class ThroughAddParams(DefaultOptimWrapperConstructor):
    """A custom constructor's add_params that calls the default one (MMEngine's route)."""

    def add_params(self, params, module, prefix="", is_dcn_module=None):
        super().add_params(params, module, prefix, is_dcn_module)


@pytest.fixture
def logged(monkeypatch, caplog):
    """The messages of the current logger while the test runs."""
    monkeypatch.setattr(logger_module, "_current_logger", logging.getLogger("paramwise_test"))
    caplog.set_level(logging.INFO, logger="paramwise_test")
    return lambda: [(record.levelno, record.getMessage()) for record in caplog.records]


@pytest.mark.parametrize("constructor", [None, "ThroughAddParams"])
def test_one_info_line_per_parameter_a_rule_changed(logged, constructor):
    cfg = dict(optimizer=OPTIMIZER, paramwise_cfg=RULES)
    if constructor:
        cfg["constructor"] = constructor
    build_optim_wrapper(net(), cfg)
    # stem.0.weight: no rule applies, no line
    assert logged() == [(logging.INFO, line) for line in EXPECTED]


def test_no_line_without_paramwise_cfg_or_when_no_rule_applies(logged):
    build_optim_wrapper(net(), dict(optimizer=OPTIMIZER))
    build_optim_wrapper(net(), dict(optimizer=OPTIMIZER, paramwise_cfg=dict(flat_decay_mult=None)))
    assert logged() == []


def test_a_runner_writes_the_lines_to_its_log(tmp_path):
    runner = make_runner(
        tmp_path,
        optim_wrapper=dict(optimizer=OPTIMIZER, paramwise_cfg=dict(bias_decay_mult=0.0)),
        train_cfg=dict(by_epoch=True, max_epochs=1),
    )
    runner.train()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    lines = [
        line.split(" - INFO - ")[1] for line in log.splitlines() if "paramwise_options" in line
    ]
    assert lines == ["paramwise_options -- linear.bias:weight_decay=0.0"]
