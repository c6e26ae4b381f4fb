"""RuntimeInfoHook: progress, learning rates, losses and metrics reach the MessageHub."""

from types import SimpleNamespace

import numpy as np
import pytest
import torch

from runnerx.hooks import Hook, RuntimeInfoHook
from runnerx.optim import OptimWrapper, OptimWrapperDict
from runnerx.version import __version__


def sgd(*lrs):
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0])


def test_before_run_records_the_run_description(runner):
    RuntimeInfoHook().before_run(runner)
    info = runner.message_hub.runtime_info
    assert "max_epochs" not in info  # a val/test-only run has no training length
    assert info["seed"] == 3 and info["experiment_name"] == "exp_20240101_000000"
    assert "model = dict(type='Net')" in info["cfg"]
    assert info["runnerx_version"] == __version__


def test_before_train_records_resumed_progress_and_dataset_meta(runner):
    runner.epoch, runner.iter = 2, 8
    runner.train_dataloader = SimpleNamespace(dataset=SimpleNamespace(metainfo={"classes": "ab"}))
    RuntimeInfoHook().before_train(runner)
    info = runner.message_hub.runtime_info
    assert (info["epoch"], info["iter"], info["dataset_meta"]) == (2, 8, {"classes": "ab"})
    assert info["max_epochs"] == 3 and info["max_iters"] == 12


def test_epoch_and_iter_info_follow_the_loop(runner, train):
    seen = []

    class Probe(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            info = runner.message_hub.runtime_info
            seen.append((info["epoch"], info["iter"]))

    runner.optim_wrapper = OptimWrapper(sgd(0.1))
    hook = RuntimeInfoHook()
    train(runner, [hook, Probe()], epochs=2)
    assert seen == [(epoch, epoch * 4 + i) for epoch in range(2) for i in range(4)]


def test_learning_rate_of_the_first_param_group_is_logged_as_train_lr(runner):
    runner.optim_wrapper = OptimWrapper(sgd(0.1, 0.01))
    hook = RuntimeInfoHook()
    hook.before_train_iter(runner, 0)
    runner.optim_wrapper.optimizer.param_groups[0]["lr"] = 0.05
    hook.before_train_iter(runner, 1)
    assert runner.message_hub.scalars["train/lr"] == [0.1, 0.05]


def test_each_optimizer_of_an_optim_wrapper_dict_has_its_own_lr_key(runner):
    runner.optim_wrapper = OptimWrapperDict(
        generator=OptimWrapper(sgd(0.2)), discriminator=OptimWrapper(sgd(0.4, 0.3))
    )
    RuntimeInfoHook().before_train_iter(runner, 0)
    scalars = runner.message_hub.scalars
    assert scalars["train/generator.lr"] == [0.2]
    assert scalars["train/discriminator.lr"] == [0.4]
    assert "train/lr" not in scalars


def test_outputs_are_recorded_as_the_tensors_themselves(runner):
    loss, acc = torch.tensor(0.7), torch.tensor(0.25)
    RuntimeInfoHook().after_train_iter(runner, 0, outputs={"loss": loss, "acc": acc})
    recorded = runner.message_hub.scalars
    # the very same objects: nothing was converted (no .item(), no host-device sync)
    assert recorded["train/loss"][0] is loss and recorded["train/acc"][0] is acc


@pytest.mark.parametrize("mode", ["val", "test"])
def test_metrics_are_scalars_and_other_results_are_info(runner, mode):
    hook = RuntimeInfoHook()
    metrics = {
        "accuracy/top1": 81.5,
        "auc": torch.tensor(0.9),
        "mAP": np.float32(0.4),
        "per_class": [0.1, 0.9],
    }
    getattr(hook, f"after_{mode}_epoch")(runner, metrics)
    scalars = runner.message_hub.scalars
    assert scalars[f"{mode}/accuracy/top1"] == [81.5]
    assert f"{mode}/auc" in scalars and f"{mode}/mAP" in scalars
    assert runner.message_hub.runtime_info[f"{mode}/per_class"] == [0.1, 0.9]
    assert f"{mode}/per_class" not in scalars


def test_with_a_message_hub_values_are_appended_unconverted_and_odd_ones_checked(runner):
    from runnerx.logging import MessageHub

    hub = runner.message_hub = MessageHub("runtime_info_real_hub")
    runner.optim_wrapper = OptimWrapper(sgd(0.1))
    hook = RuntimeInfoHook()
    loss = torch.tensor(0.5)
    hook.before_train_iter(runner, 0)
    hook.after_train_iter(runner, 0, outputs={"loss": loss, "acc": 0.75})
    assert hub.get_scalar("train/loss")._pending == [loss]  # the tensor itself, not read
    runner.optim_wrapper.optimizer.param_groups[0]["lr"] = 1  # an int: converted by the hub
    hook.before_train_iter(runner, 1)
    hook.after_train_iter(runner, 1, outputs={"loss": torch.tensor([1.5]), "acc": 0.25})
    assert hub.get_scalar("train/lr").current() == 1.0
    assert type(hub.get_scalar("train/lr").current()) is float
    assert hub.get_scalar("train/loss").mean() == 1.0
    assert hub.get_scalar("train/acc").mean() == 0.5
    with pytest.raises(ValueError, match="'train/loss'"):  # refused, with the key's name
        hook.after_train_iter(runner, 2, outputs={"loss": torch.ones(3)})

    runner.message_hub = other = MessageHub("runtime_info_next_run")  # a new run's hub
    hook.before_train(runner)
    hook.before_train_iter(runner, 0)
    hook.after_train_iter(runner, 0, outputs={"loss": loss})
    assert other.get_scalar("train/loss").current() == 0.5
    assert hub.get_scalar("train/loss").count == 2  # the first hub got nothing more


class HalvedLr(OptimWrapper):
    """An optim wrapper with a get_lr of its own (what it returns is what gets logged)."""

    def get_lr(self):
        return {"lr": [group["lr"] / 2 for group in self.param_groups], "warmup": [0.25]}


def test_an_optim_wrapper_overriding_get_lr_is_logged_as_it_returns_as_mmengine(runner):
    hook = RuntimeInfoHook()
    runner.optim_wrapper = OptimWrapper(sgd(0.1))
    hook.before_train_iter(runner, 0)
    runner.optim_wrapper = HalvedLr(sgd(0.1))
    hook.before_train(runner)  # a new run reads the optim wrapper again
    hook.before_train_iter(runner, 0)
    runner.optim_wrapper.optimizer.param_groups[0]["lr"] = 0.5
    hook.before_train_iter(runner, 1)
    scalars = runner.message_hub.scalars
    assert scalars["train/lr"] == [0.1, 0.05, 0.25]  # get_lr()'s values, not the groups'
    assert scalars["train/warmup"] == [0.25, 0.25]

    runner.optim_wrapper = OptimWrapperDict(g=HalvedLr(sgd(0.2)), d=OptimWrapper(sgd(0.4)))
    hook.before_train(runner)
    hook.before_train_iter(runner, 0)
    assert scalars["train/g.lr"] == [0.1] and scalars["train/g.warmup"] == [0.25]
    assert scalars["train/d.lr"] == [0.4]


def test_a_get_lr_that_returns_no_dict_is_an_assertion_error_as_in_mmengine(runner):
    class Broken(OptimWrapper):
        def get_lr(self):
            return "error type"

    runner.optim_wrapper = Broken(sgd(0.1))
    with pytest.raises(AssertionError, match=r"runner.optim_wrapper.get_lr\(\)") as raised:
        RuntimeInfoHook().before_train_iter(runner, 0)
    assert isinstance(raised.value, TypeError)


def test_last_loop_stage_is_the_stage_a_validation_interrupts(runner):
    hook = RuntimeInfoHook()
    hook.before_val(runner)  # a validation on its own
    assert hook.last_loop_stage is None
    hook.after_val(runner)
    assert runner.message_hub.get_info("loop_stage") is None
    hook.before_train(runner)
    hook.before_val(runner)
    assert hook.last_loop_stage == "train"
    assert runner.message_hub.get_info("loop_stage") == "val"
    hook.after_val(runner)
    assert hook.last_loop_stage is None
    assert runner.message_hub.get_info("loop_stage") == "train"
