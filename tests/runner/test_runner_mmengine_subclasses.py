"""Loops and Runner subclasses written for MMEngine, as downstream projects write them: a
BaseLoop that sets ``self._runner`` itself (mmagic's multi-dataloader loops), a training loop
on BaseLoop with its own counters, ``run()`` copied from MMEngine's loops (mmyolo, mmrotate),
a ``run_epoch`` of its own, and Runner subclasses overriding MMEngine's builders and set-up
steps with MMEngine's signatures."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import torch

from runnerx.evaluator import BaseMetric
from runnerx.fileio import wait_for_pending_writes
from runnerx.runner import BaseLoop, EpochBasedTrainLoop, IterBasedTrainLoop, Runner
from tests.checkpoint.conftest import ITERS_PER_EPOCH, TinyNet
from tests.checkpoint.tiny_data import loader


class Accuracy(BaseMetric):
    default_prefix = "tiny"

    def process(self, data_batch, data_samples) -> None:
        right = data_samples["pred_score"].argmax(-1) == data_samples["gt_label"]
        self.results.extend(right.tolist())

    def compute_metrics(self, results: list) -> dict:
        return {"acc": sum(results) / len(results)}


def settings(work_dir: Path, **kwargs) -> dict:
    """TinyNet on 8 samples (4 iterations an epoch), validated after every epoch."""
    return {
        "model": TinyNet(),
        "work_dir": str(work_dir),
        "train_dataloader": loader(shuffle=True),
        "train_cfg": {"by_epoch": True, "max_epochs": 1},
        "val_dataloader": loader(shuffle=False),
        "val_cfg": {},
        "val_evaluator": Accuracy(),
        "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1}},
        "default_hooks": {"logger": {"type": "LoggerHook", "interval": 100}, "checkpoint": None},
        "experiment_name": f"mmengine_subclasses_{uuid.uuid4().hex}",
        "randomness": {"seed": 0},
        **kwargs,
    }


def log_of(runner: Runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


# ----------------------------------------------------------------- loops


class MultiValLoop(BaseLoop):
    """mmagic's MultiValLoop: ``self._runner`` set by hand, no ``super().__init__()`` (the
    dataloaders and evaluators are lists), the Runner read through ``self.runner``."""

    def __init__(self, runner, dataloader, evaluator, fp16=False):
        self._runner = runner
        self.dataloaders = [runner.build_dataloader(d, seed=runner.seed) for d in dataloader]
        self.evaluators = [runner.build_evaluator(e) for e in evaluator]
        self.dataloader = self.dataloaders[0]

    def run(self):
        self.runner.call_hook("before_val")
        self.runner.call_hook("before_val_epoch")
        self.runner.model.eval()
        metrics = {}
        for index, (dataloader, evaluator) in enumerate(zip(self.dataloaders, self.evaluators)):
            for data_batch in dataloader:
                with torch.no_grad():
                    outputs = self.runner.model.val_step(data_batch)
                evaluator.process(data_samples=outputs, data_batch=data_batch)
            results = evaluator.evaluate(len(dataloader.dataset))
            metrics.update({f"set{index}/{key}": value for key, value in results.items()})
        self.runner.call_hook("after_val_epoch", metrics=metrics)
        self.runner.call_hook("after_val")
        return metrics


class ReadsPrivateRunner(EpochBasedTrainLoop):
    """A training loop reading MMEngine's ``self._runner``."""

    def run_iter(self, idx, data_batch):
        assert self._runner is self.runner
        super().run_iter(idx, data_batch)


def test_loops_may_set_and_read_the_runner_as_mmengines_underscore_runner(tmp_path):
    runner = Runner(
        **settings(
            tmp_path,
            train_cfg={"type": ReadsPrivateRunner, "max_epochs": 1},
            val_dataloader=[loader(shuffle=False), loader(shuffle=False)],
            val_cfg={"type": MultiValLoop},
            val_evaluator=[Accuracy(), Accuracy()],
        )
    )
    runner.train()
    assert runner.iter == ITERS_PER_EPOCH
    assert set(runner.val()) == {"set0/tiny/acc", "set1/tiny/acc"}
    assert runner.message_hub.get_scalar("val/set1/tiny/acc").current() >= 0.0


class GenerationLoop(BaseLoop):
    """mmagic's iteration loop on BaseLoop: its own counters, no ``data_position``."""

    def __init__(self, runner, dataloader, max_iters):
        super().__init__(runner, dataloader)
        self._max_iters, self._max_epochs = max_iters, 1
        self._epoch = self._iter = 0
        self.stop_training = False
        self.started_at: int | None = None

    max_iters = property(lambda self: self._max_iters)
    max_epochs = property(lambda self: self._max_epochs)
    epoch = property(lambda self: self._epoch)
    iter = property(lambda self: self._iter)

    def run(self):
        self.started_at = self._iter
        self.runner.call_hook("before_train")
        self.runner.call_hook("before_train_epoch")
        batches = iter(self.dataloader)
        while self._iter < self._max_iters and not self.stop_training:
            self.runner.model.train()
            data_batch = next(batches, None) or next(batches := iter(self.dataloader))
            self.runner.call_hook("before_train_iter", batch_idx=self._iter, data_batch=data_batch)
            outputs = self.runner.model.train_step(
                data_batch, optim_wrapper=self.runner.optim_wrapper
            )
            self.runner.call_hook(
                "after_train_iter", batch_idx=self._iter, data_batch=data_batch, outputs=outputs
            )
            self._iter += 1
        self.runner.call_hook("after_train_epoch")
        self.runner.call_hook("after_train")
        return self.runner.model


def test_a_training_loop_on_baseloop_saves_and_resumes(tmp_path):
    hooks = {"checkpoint": {"type": "CheckpointHook", "interval": 2, "by_epoch": False}}
    first = Runner(
        **settings(
            tmp_path,
            train_cfg={"type": GenerationLoop, "max_iters": 4},
            default_hooks=hooks,
            val_dataloader=None,
            val_cfg=None,
            val_evaluator=None,
        )
    )
    first.train()
    checkpoint = torch.load(tmp_path / "iter_4.pth", weights_only=True)
    assert checkpoint["meta"]["iter"] == 4 and "dataloader" not in checkpoint
    resumed = Runner(
        **settings(
            tmp_path,
            train_cfg={"type": GenerationLoop, "max_iters": 6},
            default_hooks=hooks,
            resume=True,
            val_dataloader=None,
            val_cfg=None,
            val_evaluator=None,
        )
    )
    resumed.train()
    assert (resumed.train_loop.started_at, resumed.iter) == (4, 6)
    assert (tmp_path / "iter_6.pth").exists()


class CopiedEpochRun(EpochBasedTrainLoop):
    """``run()`` copied from MMEngine's EpochBasedTrainLoop, as mmyolo's and mmrotate's."""

    def run(self):
        self.validated_after: list[int] = []
        self.runner.call_hook("before_train")
        while self._epoch < self._max_epochs and not self.stop_training:
            self.run_epoch()
            self._decide_current_val_interval()
            if (
                self.runner.val_loop is not None
                and self._epoch >= self.val_begin
                and (self._epoch % self.val_interval == 0 or self._epoch == self._max_epochs)
            ):
                self.runner.val_loop.run()
                self.validated_after.append(self._epoch)
        self.runner.call_hook("after_train")
        return self.runner.model


class CopiedIterRun(IterBasedTrainLoop):
    """``run()`` copied from MMEngine's IterBasedTrainLoop."""

    def run(self):
        self.validated_after: list[int] = []
        self.runner.call_hook("before_train")
        self.runner.call_hook("before_train_epoch")
        while self._iter < self._max_iters and not self.stop_training:
            self.runner.model.train()
            self.run_iter(next(self.dataloader_iterator))
            self._decide_current_val_interval()
            if (
                self.runner.val_loop is not None
                and self._iter >= self.val_begin
                and (self._iter % self.val_interval == 0 or self._iter == self._max_iters)
            ):
                self.runner.val_loop.run()
                self.validated_after.append(self._iter)
        self.runner.call_hook("after_train_epoch")
        self.runner.call_hook("after_train")
        return self.runner.model


@pytest.mark.parametrize(
    "train_cfg",
    [
        {"type": CopiedEpochRun, "max_epochs": 4},
        {"type": CopiedIterRun, "max_iters": 4},
    ],
)
def test_a_run_copied_from_mmengine_follows_dynamic_intervals(tmp_path, train_cfg):
    train_cfg = {**train_cfg, "val_interval": 3, "dynamic_intervals": [(2, 1)]}
    runner = Runner(**settings(tmp_path, train_cfg=train_cfg))
    loop = runner.train_loop
    assert (loop.dynamic_milestones, loop.dynamic_intervals) == ([0, 2], [3, 1])
    runner.train()
    # runnerx's rule (docs/runner.md): every 3 until the milestone, every 1 from 2 on
    assert loop.validated_after == [2, 3, 4]
    assert loop.val_interval == 1


class OwnRunEpoch(EpochBasedTrainLoop):
    """An epoch of MMEngine's body (it starts every epoch at its first batch)."""

    def run_epoch(self):
        self.runner.call_hook("before_train_epoch")
        self.runner.model.train()
        for idx, data_batch in enumerate(self.dataloader):
            self.run_iter(idx, data_batch)
        self.runner.call_hook("after_train_epoch")
        self._epoch += 1


def test_a_run_epoch_of_its_own_saves_the_batches_of_the_epoch_it_is_in(tmp_path):
    hooks = {"checkpoint": {"type": "CheckpointHook", "interval": 3, "by_epoch": False}}
    train_cfg = {"type": OwnRunEpoch, "max_epochs": 2}
    Runner(**settings(tmp_path, train_cfg=train_cfg, default_hooks=hooks)).train()
    position = torch.load(tmp_path / "iter_6.pth", weights_only=True)["dataloader"]
    assert (position["epoch"], position["batches"]) == (1, 2)  # 2 batches into epoch 2
    resumed = Runner(
        **settings(
            tmp_path,
            train_cfg={**train_cfg, "max_epochs": 3},
            default_hooks=hooks,
            resume=True,
            load_from=str(tmp_path / "iter_6.pth"),
        )
    )
    resumed.train()
    assert resumed.iter == 6 + 4 + 4  # the loop starts epoch 2 over, as in MMEngine
    log = log_of(resumed)
    assert "is not in epoch" not in log
    assert "6 iterations done, epoch 2 starts over" in log  # not "continues at batch 3"
    position = torch.load(tmp_path / "iter_12.pth", weights_only=True)["dataloader"]
    assert (position["epoch"], position["batches"]) == (2, 2)


class WrappedRunEpoch(EpochBasedTrainLoop):
    """A ``run_epoch`` of its own around the base class's, which skips what a resume did."""

    def run_epoch(self):
        self.runner.logger.info("an epoch of WrappedRunEpoch")
        super().run_epoch()


def test_a_run_epoch_around_the_base_classs_continues_the_epoch_it_resumes(tmp_path):
    hooks = {"checkpoint": {"type": "CheckpointHook", "interval": 3, "by_epoch": False}}
    train_cfg = {"type": WrappedRunEpoch, "max_epochs": 2}
    Runner(**settings(tmp_path, train_cfg=train_cfg, default_hooks=hooks)).train()
    resumed = Runner(
        **settings(
            tmp_path,
            default_hooks=hooks,
            train_cfg={**train_cfg, "max_epochs": 3},
            resume=True,
            load_from=str(tmp_path / "iter_6.pth"),
        )
    )
    resumed.train()
    assert resumed.iter == 6 + 2 + 4  # the rest of epoch 2, then epoch 3
    assert "6 iterations done, epoch 2 continues at batch 3 of 4" in log_of(resumed)


# ----------------------------------------------------------------- Runner subclasses


class MMEngineBuildersRunner(Runner):
    """MMEngine's signatures: a static ``build_dataloader`` without runnerx's ``cfg_key``,
    ``build_evaluator(evaluator)`` without its ``key``."""

    built: list[str] = []

    @staticmethod
    def build_dataloader(dataloader, seed=None, diff_rank_seed=False):
        MMEngineBuildersRunner.built.append("dataloader")
        return Runner.build_dataloader(dataloader, seed=seed, diff_rank_seed=diff_rank_seed)

    def build_evaluator(self, evaluator):
        self.built.append("evaluator")
        return super().build_evaluator(evaluator)


def test_builders_with_mmengines_signatures_build_the_loops(tmp_path):
    MMEngineBuildersRunner.built = []
    runner = MMEngineBuildersRunner(**settings(tmp_path))
    runner.train()
    assert MMEngineBuildersRunner.built == ["dataloader", "dataloader", "evaluator"]
    assert set(runner.val()) == {"tiny/acc"}


class SetUpStepsRunner(Runner):
    """Overrides each of MMEngine's set-up steps, calling the base class's."""

    def __init__(self, *args, **kwargs):
        self.steps: list[tuple] = []
        super().__init__(*args, **kwargs)

    def setup_env(self, env_cfg):
        self.steps.append(("setup_env",))
        super().setup_env(env_cfg)

    def set_randomness(self, seed=None, diff_rank_seed=False, deterministic=False):
        self.steps.append(("set_randomness", seed))
        super().set_randomness(seed, diff_rank_seed, deterministic)

    def build_log_processor(self, log_processor):
        self.steps.append(("build_log_processor", dict(log_processor)))
        return super().build_log_processor({**log_processor, "window_size": 3})

    def build_logger(self, log_level="INFO", log_file=None, **kwargs):
        self.steps.append(("build_logger", log_level))
        return super().build_logger(log_level, log_file, **kwargs)

    def build_visualizer(self, visualizer=None):
        self.steps.append(("build_visualizer", visualizer))
        self.logger.info("building the visualizer")  # the logger is there already
        return super().build_visualizer(visualizer)

    def build_model(self, model):
        self.steps.append(("build_model", type(model).__name__))
        model = super().build_model(model)
        model.tag = "built by the subclass"
        return model

    def wrap_model(self, model_wrapper_cfg, model):
        self.steps.append(("wrap_model", model_wrapper_cfg, model.tag))
        return super().wrap_model(model_wrapper_cfg, model)


def test_the_set_up_steps_a_subclass_overrides_run_in_mmengines_order(tmp_path):
    runner = SetUpStepsRunner(**settings(tmp_path))
    assert runner.steps == [
        ("setup_env",),
        ("set_randomness", 0),
        ("build_log_processor", {}),
        ("build_logger", "INFO"),
        ("build_visualizer", None),
        ("build_model", "TinyNet"),
        ("wrap_model", None, "built by the subclass"),
    ]
    assert runner.log_processor.window_size == 3
    assert runner.model.tag == "built by the subclass"
    assert "building the visualizer" in log_of(runner)


class LeftOutStepsRunner(Runner):
    """Overrides, and calls, MMEngine's steps that runnerx's Runner never calls."""

    def register_hooks(self, default_hooks=None, custom_hooks=None):
        raise AssertionError("never called")

    def rebuild_hub(self):
        return self.build_message_hub()


def test_mmengines_left_out_steps_say_what_runnerx_does_instead(tmp_path):
    runner = LeftOutStepsRunner(**settings(tmp_path, auto_scale_lr={"base_batch_size": 1}))
    log = log_of(runner)
    assert "LeftOutStepsRunner.register_hooks has no effect" in log
    # a method that would stop at a left-out one is named when the Runner is built
    assert "LeftOutStepsRunner.rebuild_hub uses build_message_hub" in log
    assert "register_hooks uses" not in log  # the subclass's own method is no missing one
    assert not hasattr(runner, "build_message_hub")
    with pytest.raises(AttributeError, match=r"'build_message_hub'.*runner\.message_hub"):
        runner.rebuild_hub()
    # MMEngine's public attribute, which code may set before train()
    assert runner.auto_scale_lr == {"base_batch_size": 1}
    runner.auto_scale_lr = {"enable": True, "base_batch_size": 1}
    runner.train()
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.2)]  # batches of 2


class ScaleLrRunner(Runner):
    """The opening of MMEngine's ``train()``, as Runner subclasses copy it."""

    def train(self):
        self.optim_wrapper = self.build_optim_wrapper(self.optim_wrapper)
        self.scale_lr(self.optim_wrapper, self.auto_scale_lr)
        return super().train()


def test_scale_lr_called_as_mmengines_train_calls_it_scales_once(tmp_path):
    scale = {"enable": True, "base_batch_size": 1}
    runner = ScaleLrRunner(**settings(tmp_path, auto_scale_lr=scale))
    assert "uses" not in log_of(runner)
    runner.train()
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.2)]  # 0.1 x 2 / 1, once
    runner.scale_lr(runner.optim_wrapper, None)  # MMEngine's no-op (mmseg's TTA runner)
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.2)]
    with pytest.raises(TypeError, match="built optim wrapper") as caught:
        runner.scale_lr({"optimizer": {"type": "SGD", "lr": 0.1}}, scale)
    assert isinstance(caught.value, AssertionError)  # MMEngine asserts


def test_resume_takes_mmengines_map_location(tmp_path):
    first = Runner(**settings(tmp_path / "first"))
    first.train()
    path = first.save_checkpoint(first.work_dir, "epoch_1.pth")
    wait_for_pending_writes()  # the checkpoint is written by a thread
    second = Runner(**settings(tmp_path / "second", train_cfg={"by_epoch": True, "max_epochs": 2}))
    placed = []
    second.resume(path, map_location=lambda storage, location: placed.append(location) or storage)
    assert placed and set(placed) == {"cpu"}  # read through the given map_location
    assert second.epoch == 2  # as MMEngine, save_checkpoint(by_epoch=True) counts epoch + 1
    third = Runner(**settings(tmp_path / "third", train_cfg={"by_epoch": True, "max_epochs": 2}))
    third.resume(path, True, True, "default")  # MMEngine's arguments, by position
    assert third.epoch == 2


class HasLoadedRunner(Runner):
    """MMEngine's ``load_or_resume`` body, on its ``_has_loaded`` flag."""

    loads = 0

    def load_or_resume(self):
        if self._has_loaded:
            return
        if self._load_from is not None:
            self.load_checkpoint(self._load_from)
            HasLoadedRunner.loads += 1
        self._has_loaded = True


def test_a_load_or_resume_override_on_mmengines_has_loaded_flag_loads_once(tmp_path):
    hooks = {"checkpoint": {"type": "CheckpointHook", "interval": 1}}
    trained = Runner(**settings(tmp_path / "first", default_hooks=hooks))
    trained.train()
    HasLoadedRunner.loads = 0
    runner = HasLoadedRunner(**settings(tmp_path, load_from=str(tmp_path / "first/epoch_1.pth")))
    assert runner._has_loaded is False
    runner.val()
    runner.val()
    assert HasLoadedRunner.loads == 1
    assert torch.equal(runner.model.linear.weight, trained.model.linear.weight)
    runner.load_or_resume()  # the Runner's own flag, the same one
    assert HasLoadedRunner.loads == 1
