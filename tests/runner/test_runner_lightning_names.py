"""A Lightning user's names given to the Runner: Trainer flags as config keys (a warning naming
the runnerx key) and as Runner(...) arguments (a TypeError naming it), and hooks with Callback
methods (one warning per hook class)."""

from pathlib import Path

import pytest

from runnerx.hooks import Hook
from runnerx.runner import Runner


def log_of(runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def test_trainer_flags_as_config_keys_are_named_with_their_runnerx_key(digits_cfg):
    digits_cfg.merge_from_dict(
        dict(gradient_clip_val=1.0, accumulate_grad_batches=2, precision="bf16-mixed", callbacks=[])
    )
    digits_cfg.max_epochs = 5  # OpenMMLab configs use it as a plain variable
    digits_cfg.datamodule = None  # nothing lost
    log = log_of(Runner.from_cfg(digits_cfg))
    assert (
        "the config's 'gradient_clip_val' is a Lightning Trainer flag, which runnerx ignores as "
        "a config key; in runnerx it is optim_wrapper=dict(..., clip_grad=dict(max_norm=...))"
    ) in log
    assert "'accumulate_grad_batches' is a Lightning" in log and "accumulative_counts=N" in log
    assert "'precision' is a Lightning" in log and "type='AmpOptimWrapper'" in log
    assert "'callbacks' is a Lightning" in log and "custom_hooks=[...]" in log
    assert "'max_epochs'" not in log and "'datamodule'" not in log
    assert "did you mean" not in log


def test_trainer_flags_as_runner_arguments_are_refused_with_their_runnerx_key(tmp_path):
    with pytest.raises(TypeError) as error:
        Runner(model=None, work_dir=str(tmp_path), max_epochs=3, callbacks=[], launcher="none")
    message = str(error.value)
    assert message.startswith("Runner() got Lightning Trainer flags, which it does not take")
    assert "max_epochs -> train_cfg=dict(by_epoch=True, max_epochs=N)" in message
    assert "callbacks -> custom_hooks=[...]" in message
    assert not list(tmp_path.iterdir())  # refused before anything was built


def test_a_subclass_that_takes_a_flag_of_that_name_gets_it(digits_cfg):
    class PrecisionRunner(Runner):
        def __init__(self, *args, precision="32", **kwargs):
            self.precision = precision
            super().__init__(*args, **kwargs)

    runner = PrecisionRunner(
        model=digits_cfg.model, work_dir=digits_cfg.work_dir, precision="bf16-mixed"
    )
    assert runner.precision == "bf16-mixed"


class LitCallback(Hook):
    def on_train_epoch_end(self, trainer, pl_module): ...

    def after_run(self, runner): ...


class AnotherLitCallback(LitCallback):
    pass


def test_hooks_with_callback_methods_warn_once_per_class(digits_cfg):
    digits_cfg.custom_hooks = [LitCallback(), LitCallback()]
    runner = Runner.from_cfg(digits_cfg)
    assert log_of(runner).count("LitCallback defines Lightning Callback methods") == 1
    runner.register_hook(AnotherLitCallback())  # a repeat of the same line would be dropped
    assert log_of(runner).count("AnotherLitCallback defines Lightning Callback methods") == 1
