"""What MMEngine's Runner gives where runnerx's once differed: the config is the Runner's
own copy, a Runner without training reports none, ``set_randomness`` updates
``deterministic``, and ``build_logger`` takes MMLogger's keywords."""

from __future__ import annotations

import functools
import logging.handlers
import os

import pytest
import torch

from runnerx.runner import FlexibleRunner, Runner

TRAIN_KEYS = ("train_dataloader", "train_cfg", "optim_wrapper", "param_scheduler")


def edit(cfg):
    """Change, after the Runner was built, what the Runner would read."""
    cfg.train_cfg.max_epochs = 99
    cfg.optim_wrapper.optimizer.lr = 0.5
    cfg.param_scheduler[1].end = 99


@pytest.mark.parametrize("runner_type", [Runner, FlexibleRunner], ids=lambda cls: cls.__name__)
def test_editing_the_callers_config_after_from_cfg_changes_nothing_in_the_run(
    digits_cfg, runner_type
):
    runner = runner_type.from_cfg(digits_cfg)
    edit(digits_cfg)
    assert runner.max_epochs == 8  # the loop is built now, from train_cfg
    runner._build_optimization()
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.01)]  # LinearLR's 0.1 x 0.1
    assert runner.param_schedulers[1].T_max == 8
    assert runner.cfg.train_cfg.max_epochs == 8 and runner.cfg.filename == digits_cfg.filename
    assert "sgd_10e.py:4" in str(runner.cfg.explain("optim_wrapper.optimizer.lr"))


def test_the_cfg_argument_is_copied(digits_cfg):
    runner = Runner(digits_cfg.model, digits_cfg.work_dir, cfg=digits_cfg)
    edit(digits_cfg)
    assert runner.cfg is not digits_cfg and runner.cfg.train_cfg.max_epochs == 8
    assert runner.cfg.optim_wrapper.optimizer.lr == 0.1 and runner.cfg.param_scheduler[1].end == 8


def test_objects_in_the_config_are_kept_not_copied(digits_cfg):
    model = Runner.from_cfg(digits_cfg).unwrapped_model
    digits_cfg.model = model
    digits_cfg.extra = dict(function=functools.partial(max, 1))  # equal only to itself
    runner = Runner.from_cfg(digits_cfg)
    assert runner.unwrapped_model is model and runner.cfg.model is model
    assert runner.cfg.extra == digits_cfg.extra and runner.cfg.extra is not digits_cfg.extra


@pytest.fixture
def test_only(digits_cfg):
    for key in TRAIN_KEYS:
        digits_cfg.pop(key)
    return Runner.from_cfg(digits_cfg)


def test_a_runner_without_train_cfg_reports_no_training_as_mmengine(test_only):
    assert test_only.train_loop is None and test_only.train_dataloader is None
    assert (test_only.max_epochs, test_only.max_iters, test_only.epoch, test_only.iter) == (0,) * 4
    assert "accuracy/top1" in test_only.test()


@pytest.mark.parametrize(
    "ask",
    [
        lambda runner: runner.train(),
        lambda runner: runner.build_param_scheduler(dict(type="LinearLR")),
        lambda runner: runner.val_interval,
    ],
    ids=["train", "build_param_scheduler", "val_interval"],
)
def test_what_needs_training_says_the_runner_cannot_train(test_only, ask):
    test_only.optim_wrapper = test_only.build_optim_wrapper(dict(optimizer=dict(type="SGD", lr=1)))
    with pytest.raises(RuntimeError, match="no train_cfg .* it cannot train"):
        ask(test_only)


def test_set_randomness_called_directly_updates_seed_and_deterministic(digits_cfg, monkeypatch):
    asked = []
    monkeypatch.setattr(torch, "use_deterministic_algorithms", lambda *a, **k: asked.append(a))
    monkeypatch.setattr(torch.backends.cudnn, "benchmark", torch.backends.cudnn.benchmark)
    monkeypatch.setattr(torch.backends.cudnn, "deterministic", torch.backends.cudnn.deterministic)
    runner = Runner.from_cfg(digits_cfg)
    assert runner.deterministic is False
    runner.set_randomness(5, deterministic=True)
    assert (runner.seed, runner.deterministic, asked) == (5, True, [(True,)])


class KeywordLogger(Runner):
    """A subclass passing MMEngine's MMLogger keywords on, as MMEngine subclasses do."""

    logger_kwargs: dict = {}

    def build_logger(self, log_level="INFO", log_file=None, **kwargs):
        return super().build_logger(log_level, log_file, **self.logger_kwargs)


def test_build_logger_takes_mmloggers_keywords_with_their_meaning(digits_cfg, monkeypatch):
    rotating = dict(type="RotatingFileHandler", maxBytes=2**20, backupCount=1)
    kwargs = dict(file_mode="w", name="x", logger_name="mmdet", file_handler_cfg=rotating)
    monkeypatch.setattr(KeywordLogger, "logger_kwargs", kwargs)
    runner = KeywordLogger.from_cfg(digits_cfg)
    files = [h for h in runner.logger.handlers if isinstance(h, logging.FileHandler)]
    assert [type(h) for h in files] == [logging.handlers.RotatingFileHandler]
    assert files[0].baseFilename == os.path.join(runner.log_dir, f"{runner.timestamp}.log")
    runner.logger.info("hello")
    with open(files[0].baseFilename, encoding="utf-8") as log:
        assert " - mmdet - INFO - hello" in log.read()


def test_build_logger_refuses_an_unknown_keyword_with_the_close_match(digits_cfg, monkeypatch):
    monkeypatch.setattr(KeywordLogger, "logger_kwargs", {"file_mod": "w"})
    with pytest.raises(TypeError, match=r"'file_mod'; did you mean 'file_mode'\?"):
        KeywordLogger.from_cfg(digits_cfg)
