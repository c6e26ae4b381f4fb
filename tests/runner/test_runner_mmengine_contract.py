"""What code written against MMEngine's Runner and loops relies on (found by running MMEngine's
tests/test_runner/test_runner.py against runnerx): custom loops built on IterBasedTrainLoop,
resume() before train(), register_hook's priority, and errors raised before training."""

import copy
import uuid
from pathlib import Path

import pytest
import torch
from torch import nn

from runnerx import HOOKS, LOOPS, MODELS
from runnerx.hooks import Hook, get_priority
from runnerx.optim import OptimWrapper
from runnerx.registry import VISUALIZERS, DefaultScope, Registry
from runnerx.runner import IterBasedTrainLoop, Runner
from runnerx.visualization import Visualizer


def iteration_based(cfg, train_cfg):
    """The digits config trained for iterations, checkpointing and logging by iteration."""
    cfg.train_cfg = train_cfg
    cfg.param_scheduler = [dict(type="LinearLR", start_factor=0.5, by_epoch=False, end=4)]
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=100)
    cfg.log_processor = dict(by_epoch=False)
    return cfg


@LOOPS.register_module()
class WarmupThenTrainLoop(IterBasedTrainLoop):
    """A custom loop as MMEngine's docs write one: its own run(), reading batches with
    next(self.dataloader_iterator) and training each with self.run_iter(data_batch)."""

    def __init__(self, runner, dataloader, max_iters, warmup_iters):
        super().__init__(runner, dataloader, max_iters=max_iters)
        self.warmup_iters = warmup_iters

    def run(self):
        self.runner.call_hook("before_train")
        for _ in range(self.warmup_iters):
            self.runner.call_hook("before_warmup_iter")
            next(self.dataloader_iterator)
        self.runner.call_hook("before_train_epoch")
        while self.runner.iter < self._max_iters:
            self.run_iter(next(self.dataloader_iterator))
        self.runner.call_hook("after_train_epoch")
        self.runner.call_hook("after_train")
        return self.runner.model


@HOOKS.register_module()
class IterationNoteHook(Hook):
    """Notes the batch_idx of each training iteration, the val_interval hooks see then, and
    the calls of the custom loop's own point."""

    def __init__(self):
        self.batch_indices, self.intervals, self.warmups = [], [], 0

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.batch_indices.append(batch_idx)
        self.intervals.append(runner.train_loop.val_interval)

    def before_warmup_iter(self, runner):
        self.warmups += 1


def note_hook(runner):
    return next(hook for hook in runner.hooks if isinstance(hook, IterationNoteHook))


def test_a_custom_loop_reads_dataloader_iterator_and_trains_with_run_iter(digits_cfg):
    cfg = iteration_based(digits_cfg, dict(type="WarmupThenTrainLoop", max_iters=5, warmup_iters=2))
    cfg.custom_hooks = [dict(type="IterationNoteHook")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    hook = note_hook(runner)
    assert runner.iter == 5 and hook.warmups == 2
    assert hook.batch_indices == [0, 1, 2, 3, 4]  # run_iter numbers the batch by the count


def test_the_iteration_loop_shows_hooks_the_val_interval_of_the_iteration_they_are_in(
    digits_cfg,
):
    train_cfg = dict(by_epoch=False, max_iters=12, val_interval=5, dynamic_intervals=[(11, 2)])
    cfg = iteration_based(digits_cfg, train_cfg)
    cfg.custom_hooks = [dict(type="IterationNoteHook")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    # iteration n (counted from 1) is under interval 5 before the milestone 11, 2 from it on
    assert note_hook(runner).intervals == [5 if n < 11 else 2 for n in range(1, 13)]


def test_resume_before_train_builds_the_optim_wrapper_and_schedulers(digits_cfg):
    digits_cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    first = Runner.from_cfg(digits_cfg)
    first.train()
    saved_lr = first.optim_wrapper.param_groups[0]["lr"]
    digits_cfg.optim_wrapper.optimizer.lr = 0.5  # the checkpoint's state must win
    second = Runner.from_cfg(digits_cfg)
    second.resume(f"{digits_cfg.work_dir}/epoch_1.pth")
    assert isinstance(second.optim_wrapper, OptimWrapper)
    assert second.optim_wrapper.param_groups[0]["lr"] == pytest.approx(saved_lr)
    assert [type(s) for s in second.param_schedulers] == [type(s) for s in first.param_schedulers]
    assert second.epoch == 1


def test_register_hooks_priority_argument_wins_over_the_configs(digits_cfg):
    runner = Runner.from_cfg(digits_cfg)
    runner.register_hook(dict(type="EmptyCacheHook", priority="LOW"), priority="VERY_LOW")
    hook = next(h for h in runner.hooks if type(h).__name__ == "EmptyCacheHook")
    assert get_priority(hook.priority) == get_priority("VERY_LOW")
    runner.register_hook(dict(type="IterationNoteHook", priority="HIGH"))
    assert get_priority(note_hook(runner).priority) == get_priority("HIGH")


@pytest.mark.parametrize(
    ("call", "key"),
    [
        (lambda runner: runner.register_hook(["IterTimerHook"]), "hook"),
        (lambda runner: runner.build_optim_wrapper("SGD"), "optim_wrapper"),
        (lambda runner: runner.build_train_loop("EpochBasedTrainLoop"), "train_cfg"),
        (lambda runner: runner.build_val_loop(12), "val_cfg"),
        (lambda runner: runner.build_test_loop("TestLoop"), "test_cfg"),
    ],
)
def test_builders_refuse_what_is_neither_a_config_nor_the_object(digits_cfg, call, key):
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(TypeError, match=key):
        call(runner)


def test_train_cfg_with_both_type_and_by_epoch_is_refused(digits_cfg):
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(RuntimeError, match="both type and by_epoch"):
        runner.build_train_loop(dict(type="EpochBasedTrainLoop", by_epoch=True, max_epochs=1))


@pytest.mark.parametrize(
    ("key", "loop_cfg", "named"),
    [
        ("train_cfg", dict(by_epoch=True, max_epoch=2), "max_epochs"),
        ("train_cfg", dict(by_epoch=False, max_iter=20), "max_iters"),
        ("train_cfg", dict(type="EpochBasedTrainLoop", max_epoch=2), "max_epochs"),
        ("val_cfg", dict(limit_batch=3), "limit_batches"),
        ("test_cfg", dict(fp_16=True), "fp16"),
    ],
)
def test_a_misspelt_loop_argument_is_named_with_its_config_key(digits_cfg, key, loop_cfg, named):
    digits_cfg[key] = loop_cfg
    runner = Runner.from_cfg(digits_cfg)
    build = {"train_cfg": "train_loop", "val_cfg": "val_loop", "test_cfg": "test_loop"}[key]
    with pytest.raises(TypeError, match=rf"cfg\.{key} .*did you mean '{named}'\?"):
        getattr(runner, build)
    assert digits_cfg[key] == loop_cfg  # the user's config is left as it was


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("log_processor", dict(window_sizee=10), r"cfg\.log_processor .*'window_size'\?"),
        (
            "visualizer",
            dict(type="Visualizer", vis_backend=[]),
            r"cfg\.visualizer .*'vis_backends'\?",
        ),
        (
            "visualizer",
            dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend", save_dirr="x")]),
            r"cfg\.visualizer\.vis_backends\[0\] .*'save_dir'\?",
        ),
        (
            "param_scheduler",
            [dict(type="LinearLR", start_factr=0.1, by_epoch=False, end=5)],
            r"param_scheduler\[0\] \(type='LinearLR'\): .*did you mean 'start_factor'\?",
        ),
    ],
)
def test_a_misspelt_argument_of_a_run_part_is_named_with_its_key(digits_cfg, key, value, expected):
    digits_cfg[key] = value
    with pytest.raises(TypeError, match=expected):
        Runner.from_cfg(digits_cfg).train()


def test_param_scheduler_without_optim_wrapper_is_refused_when_built(digits_cfg):
    for key in ("train_dataloader", "train_cfg", "optim_wrapper"):
        digits_cfg.pop(key)
    with pytest.raises(ValueError, match="param_scheduler is set but optim_wrapper is not"):
        Runner.from_cfg(digits_cfg)


@pytest.mark.parametrize(
    ("param_scheduler", "where"),
    [("MultiStepLR", r"param_scheduler must"), (dict(net=["linear"]), r"param_scheduler\.net")],
)
def test_a_param_scheduler_of_the_wrong_shape_is_refused_when_built(
    digits_cfg, param_scheduler, where
):
    digits_cfg.param_scheduler = param_scheduler
    with pytest.raises(TypeError, match=where):
        Runner.from_cfg(digits_cfg)


@MODELS.register_module()
class TrainOnlyNet(nn.Module):
    """A model with a train_step only (MMEngine allows models that are no BaseModel)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(1, 1)

    def train_step(self, data, optim_wrapper):
        loss = self.linear.weight.sum() * 0 + torch.tensor(1.0)
        optim_wrapper.update_params(loss)
        return {"loss": loss}


def test_a_model_without_val_step_is_refused_before_training_starts(digits_cfg):
    digits_cfg.model = dict(type="TrainOnlyNet")
    digits_cfg.custom_hooks = [dict(type="IterationNoteHook")]
    runner = Runner.from_cfg(digits_cfg)
    with pytest.raises(TypeError, match=r"TrainOnlyNet, has no val_step\(\)"):
        runner.train()
    assert note_hook(runner).batch_indices == []  # not one iteration was spent


@pytest.mark.parametrize("dynamic", [None, [(4, 1)], [(3, 2), (10, 5)]])
def test_calc_dynamic_intervals_as_mmengines(dynamic):
    from mmengine.runner.utils import calc_dynamic_intervals as theirs

    from runnerx.runner.utils import calc_dynamic_intervals

    assert calc_dynamic_intervals(3, dynamic) == theirs(3, dynamic)


def _counting(tensors):
    def pack(tensor):
        tensors.append(tensor)
        return tensor

    return pack


def test_wrap_forward_gives_the_same_outputs_and_gradients():
    from runnerx.runner.activation_checkpointing import wrap_forward

    torch.manual_seed(0)
    plain = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    wrapped = copy.deepcopy(plain)
    wrapped.forward = wrap_forward(wrapped.forward)
    inputs = torch.randn(5, 4)
    saved = {}
    for name, model in (("plain", plain), ("wrapped", wrapped)):
        packed = []
        hooks = torch.autograd.graph.saved_tensors_hooks(_counting(packed), lambda t: t)
        with hooks:
            loss = model(inputs).sum()
        saved[name] = len(packed)
        loss.backward()
    assert saved["wrapped"] < saved["plain"]  # activations are recomputed, not kept
    for ours, theirs in zip(wrapped.parameters(), plain.parameters(), strict=True):
        torch.testing.assert_close(ours.grad, theirs.grad)


# a package's registry module (mmdet.registry): a child of the root VISUALIZERS in its own
# scope, holding the package's visualizer
PACKAGE_VISUALIZERS = Registry("visualizer", parent=VISUALIZERS, scope="contract_vis_pkg")


@PACKAGE_VISUALIZERS.register_module()
class PackageVisualizer(Visualizer):
    """A task visualizer registered only in its package's scope (as DetLocalVisualizer)."""


def test_the_visualizer_is_built_in_the_configs_default_scope(digits_cfg, monkeypatch):
    """MMEngine sets the default scope before it builds the visualizer, so a package's
    configs name their own visualizer without a scope prefix."""
    # the package's scope stays current after the run (as in MMEngine): not for later tests
    monkeypatch.setattr(DefaultScope, "_current", DefaultScope.get_current_instance())
    digits_cfg.default_scope = "contract_vis_pkg"
    digits_cfg.visualizer = dict(
        type="PackageVisualizer", vis_backends=[dict(type="LocalVisBackend")]
    )
    runner = Runner.from_cfg(digits_cfg)
    assert type(runner.visualizer) is PackageVisualizer


def built_log(digits_cfg, monkeypatch, default_scope):
    """The log of a Runner built from the digits config with ``default_scope``."""
    monkeypatch.setattr(DefaultScope, "_current", DefaultScope.get_current_instance())
    digits_cfg.default_scope = default_scope
    digits_cfg.experiment_name = f"scope_{uuid.uuid4().hex}"  # a DefaultScope of its own
    runner = Runner.from_cfg(digits_cfg)
    assert runner.default_scope.scope_name == default_scope
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def test_a_default_scope_no_registry_has_is_warned_of_with_a_close_match(digits_cfg, monkeypatch):
    log = built_log(digits_cfg, monkeypatch, "runerx")
    assert "default_scope='runerx' is not the scope of any registry" in log
    assert "(importing runerx.registry failed: No module named 'runerx')" in log
    assert "did you mean 'runnerx'?" in log


def test_a_scope_that_its_registry_module_creates_is_not_warned_of(
    digits_cfg, monkeypatch, tmp_path
):
    # an installed package whose registry.py makes its child registries, as mmdet.registry
    package = tmp_path / "packages" / "contract_scope_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "registry.py").write_text(
        "from runnerx.registry import METRICS, Registry\n"
        "METRICS = Registry('metric', parent=METRICS, scope='contract_scope_pkg')\n"
    )
    monkeypatch.syspath_prepend(str(package.parent))
    for scope in ("contract_scope_pkg", "contract_vis_pkg", "mmengine", "runnerx"):
        assert "default_scope=" not in built_log(digits_cfg, monkeypatch, scope), scope
