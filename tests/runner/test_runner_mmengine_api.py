"""The parts of MMEngine's Runner API kept for code written against it (mmengine_api.py)."""

import inspect
from pathlib import Path

import pytest
from mmengine.runner import Runner as MMEngineRunner
from torch import nn

from runnerx.evaluator import Accuracy
from runnerx.hooks import EmptyCacheHook, Hook
from runnerx.optim import OptimWrapper
from runnerx.optim.scheduler import CosineAnnealingLR, LinearLR
from runnerx.runner import Runner, loops
from runnerx.runner.mmengine_api import LeftOut

#: MMEngine Runner members runnerx leaves out: set-up steps that runnerx's Runner does in
#: __init__ (hooks, MessageHub) from the same arguments
NOT_KEPT = {
    "build_message_hub",
    "register_default_hooks",
    "register_hooks",
}


def test_every_public_member_of_mmengines_runner_is_here_but_its_set_up_steps():
    theirs = {name for name, _ in inspect.getmembers(MMEngineRunner) if not name.startswith("_")}
    members = inspect.getmembers(Runner)
    ours = {name for name, value in members if not name.startswith("_")}
    ours -= {name for name, value in members if isinstance(value, LeftOut)}  # hints only
    instance_attributes = {"rank", "world_size", "distributed", "seed", "timestamp"}
    instance_attributes |= {"work_dir", "log_dir"}
    assert theirs - ours - instance_attributes == NOT_KEPT


@pytest.fixture
def runner(digits_cfg):
    digits_cfg.train_cfg.val_interval = 2
    return Runner.from_cfg(digits_cfg)


def test_read_only_views(runner):
    assert runner.model_name == "DigitsConvNet"
    assert runner.deterministic is False
    assert runner.val_interval == 2 and runner.val_begin == 1
    assert runner.val_evaluator is runner.val_loop.evaluator
    assert isinstance(runner.val_evaluator.metrics[0], Accuracy)
    assert runner.test_evaluator is runner.test_loop.evaluator
    assert "before_train_iter:" in runner.get_hooks_info()
    assert "(VERY_HIGH   ) RuntimeInfoHook" in runner.get_hooks_info()


def test_build_methods_make_what_the_runner_would(runner):
    model = runner.build_model(dict(type="DigitsConvNet"))
    assert type(model).__name__ == "DigitsConvNet" and model is not runner.model
    assert runner.build_model(runner.model) is runner.model
    for mmengine_type in (RuntimeError, AssertionError):  # MMEngine asserts
        with pytest.raises(mmengine_type, match="build_optim_wrapper should be called before"):
            runner.build_param_scheduler(dict(type="LinearLR"))  # the optim wrapper is a config
    runner.optim_wrapper = runner.build_optim_wrapper(dict(optimizer=dict(type="SGD", lr=0.5)))
    assert isinstance(runner.optim_wrapper, OptimWrapper)
    assert runner.optim_wrapper.param_groups[0]["lr"] == 0.5
    assert runner.build_optim_wrapper(runner.optim_wrapper) is runner.optim_wrapper
    schedulers = runner.build_param_scheduler(runner.cfg.param_scheduler)
    assert [type(s) for s in schedulers] == [LinearLR, CosineAnnealingLR]

    loop = runner.build_train_loop(dict(by_epoch=False, max_iters=5))
    assert isinstance(loop, loops.IterBasedTrainLoop) and loop.max_iters == 5
    assert runner.build_train_loop(loop) is loop
    assert isinstance(runner.build_val_loop(dict()), loops.ValLoop)
    assert isinstance(runner.build_test_loop(dict()), loops.TestLoop)


def test_register_custom_hooks_and_dump_config(runner):
    runner.register_custom_hooks([dict(type="EmptyCacheHook", after_iter=True)])
    (hook,) = [hook for hook in runner.hooks if isinstance(hook, EmptyCacheHook)]
    assert hook.after_train_iter in runner.hook_methods("after_train_iter")
    dumped = Path(runner.work_dir, "digits_convnet.py")  # MMEngine's place for it
    dumped.unlink()  # written when the Runner was built
    runner.dump_config()
    assert "DigitsConvNet" in dumped.read_text()


def test_build_model_refuses_anything_but_a_module_or_a_dict(runner):
    with pytest.raises(TypeError, match="nn.Module or a config dict"):
        runner.build_model(nn.Linear)


def test_a_config_built_in_python_is_logged_and_written_as_timestamp_py(digits_cfg):
    # MMEngine's runner tutorial writes env_cfg.backend, which MMEngine ignores
    cfg = dict(digits_cfg.to_dict(), env_cfg=dict(cudnn_benchmark=False, backend="nccl"))
    runner = Runner.from_cfg(cfg)
    dumped = Path(runner.work_dir, f"{runner.timestamp}.py")
    assert "DigitsConvNet" in dumped.read_text()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "Config:\n" in log and "type='DigitsConvNet'" in log
    # setup_env runs before the log is open: its warning is in the log all the same
    assert "WARNING - env_cfg.backend='nccl' is ignored, as in MMEngine" in log
    assert Path(runner.log_dir, "vis_data", "config.py").read_text() == runner.cfg_text


def test_flexible_runner_imports_from_mmengines_documented_path():
    from runnerx.runner import FlexibleRunner
    from runnerx.runner._flexible_runner import FlexibleRunner as documented

    assert documented is FlexibleRunner


def test_efficient_conv_bn_eval_naming_a_missing_submodule_is_an_error_naming_the_key(digits_cfg):
    digits_cfg.efficient_conv_bn_eval = ["backbone"]  # DigitsConvNet has none
    with pytest.raises(AttributeError, match=r"efficient_conv_bn_eval: 'backbone' is not a sub"):
        Runner.from_cfg(digits_cfg)


def test_log_level_debug_logs_what_each_config_built_and_from_where(digits_cfg):
    digits_cfg.log_level = "DEBUG"
    runner = Runner.from_cfg(digits_cfg)
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "DEBUG - built type='CheckpointHook' from the 'hook' registry" in log
    assert "runnerx.hooks.checkpoint_hook.CheckpointHook" in log


def test_mmcv_era_keys_are_named_with_their_mmengine_place(digits_cfg):
    # MMEngine drops them silently: a run would train without the schedule they meant
    digits_cfg.lr_config = dict(policy="step", step=[8, 11])
    digits_cfg.optimizer = dict(type="SGD", lr=0.02)
    runner = Runner.from_cfg(digits_cfg)
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "'lr_config' is an MMCV 1.x key" in log and "it is param_scheduler=[...]" in log
    assert "'optimizer' is an MMCV 1.x key" in log and "optim_wrapper=dict(optimizer=...)" in log
    assert "'runner' is an MMCV" not in log


def test_a_misspelt_runner_key_is_named_and_config_variables_are_not(digits_cfg):
    digits_cfg.default_hook = dict(checkpoint=dict(type="CheckpointHook", interval=1))
    digits_cfg.scheduler = [dict(type="LinearLR")]  # MMEngine's optimization.md writes this
    digits_cfg.train_pipeline = [dict(type="LoadImage")]  # a config's own variables
    digits_cfg.test_pipeline = [dict(type="LoadImage")]
    runner = Runner.from_cfg(digits_cfg)
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "'default_hook' is not a key the Runner reads: did you mean 'default_hooks'?" in log
    assert "'scheduler' is not a key the Runner reads: did you mean 'param_scheduler'?" in log
    assert "'train_pipeline' is not" not in log and "'test_pipeline' is not" not in log


def test_a_runner_subclass_can_override_mmengines_set_up_steps(digits_cfg):
    # MMEngine's runner design page: class CustomRunner(Runner): def setup_env(self, env_cfg)
    calls = []

    class CustomRunner(Runner):
        def setup_env(self, env_cfg):
            calls.append(("setup_env", env_cfg.get("cudnn_benchmark")))
            super().setup_env(env_cfg)

        def set_randomness(self, seed=None, diff_rank_seed=False, deterministic=False):
            calls.append(("set_randomness", seed))
            super().set_randomness(seed, diff_rank_seed, deterministic)

    digits_cfg.randomness = dict(seed=7)
    runner = CustomRunner.from_cfg(digits_cfg)
    assert calls == [("setup_env", False), ("set_randomness", 7)] and runner.seed == 7


class LoopStages(Hook):
    """Records MMEngine's 'loop_stage' info where MMEngine's hooks read it."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    def _note(self, point: str, runner) -> None:
        self.seen.append((point, runner.message_hub.get_info("loop_stage")))

    def before_train_epoch(self, runner) -> None:
        self._note("before_train_epoch", runner)

    def before_val_epoch(self, runner) -> None:
        self._note("before_val_epoch", runner)

    def after_val(self, runner) -> None:
        self._note("after_val", runner)

    def after_train(self, runner) -> None:
        self._note("after_train", runner)

    def before_test_epoch(self, runner) -> None:
        self._note("before_test_epoch", runner)

    def after_test(self, runner) -> None:
        self._note("after_test", runner)


def test_loop_stage_is_the_running_loop_as_in_mmengine(digits_cfg):
    digits_cfg.train_cfg.max_epochs = 1
    digits_cfg.train_dataloader.num_batch_per_epoch = 2
    runner = Runner.from_cfg(digits_cfg)
    stages = LoopStages()
    runner.register_hook(stages)
    runner.train()
    # RuntimeInfoHook (VERY_HIGH) acts before this LOWEST hook at every point: after_val has
    # 'train' back, after_train has none
    assert stages.seen == [
        ("before_train_epoch", "train"),
        ("before_val_epoch", "val"),
        ("after_val", "train"),
        ("after_train", None),
    ]
    stages.seen.clear()
    runner.val()
    runner.test()
    assert stages.seen == [
        ("before_val_epoch", "val"),
        ("after_val", None),
        ("before_test_epoch", "test"),
        ("after_test", None),
    ]
    assert "loop_stage" not in runner.message_hub.runtime_info
