"""What a resume restores, and what it says: the training weights of a checkpoint saved with
EMAHook when the resumed run has none, a changed sampler shuffle mid-epoch, the seeds the
checkpoint keeps, where training continues, and which config changes are used or not.

The run: a linear classifier on 8 samples in batches of 2 (4 iterations per epoch), built
from a plain-data config (its text is saved in the checkpoints), a checkpoint every 2
iterations."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from runnerx import HOOKS, Config
from runnerx.checkpoint import load_checkpoint
from runnerx.data.samplers.position import batches_to_skip, data_position
from runnerx.hooks import Hook
from runnerx.runner import Runner
from tests.checkpoint.tiny_config import tiny_run_config


@HOOKS.register_module()
class RecordBatchIdx(Hook):
    """Keeps the batch index of every training iteration (``indices``)."""

    def __init__(self):
        self.indices = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.indices.append(batch_idx)


def tiny_cfg(work_dir: Path, **changes) -> Config:
    cfg = tiny_run_config(
        work_dir, dict(by_epoch=True, max_epochs=2), dict(lr=0.1, momentum=0.9), 2
    )
    cfg.merge_from_dict(changes)
    return cfg


def trained(work_dir: Path, **changes) -> Runner:
    runner = Runner.from_cfg(tiny_cfg(work_dir, **changes))
    runner.train()
    return runner


def resumed(checkpoint: Path, work_dir: Path, **changes) -> tuple[Runner, str]:
    """Resume ``checkpoint`` in ``work_dir`` with ``changes`` and train to the end: the runner
    and its log."""
    runner = Runner.from_cfg(tiny_cfg(work_dir, resume=str(checkpoint), **changes))
    runner.train()
    return runner, Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def weights(runner: Runner) -> dict:
    return {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}


@pytest.fixture(scope="module")
def plain_run(tmp_path_factory) -> Path:
    """The work dir of a finished two-epoch run: iter_2 ... iter_8.pth."""
    work = tmp_path_factory.mktemp("plain")
    trained(work)
    return work


@pytest.fixture(scope="module")
def ema_run(tmp_path_factory) -> tuple[Path, dict]:
    """A two-epoch run with EMAHook: its work dir, and its final training weights."""
    work = tmp_path_factory.mktemp("ema")
    runner = trained(work, custom_hooks=[dict(type="EMAHook", momentum=0.01)])
    return work, weights(runner)


def test_resuming_an_ema_checkpoint_without_emahook_continues_from_the_training_weights(
    tmp_path, ema_run
):
    """EMA does not change training: the run resumed without it ends with the weights of the
    EMA run, and of a run that never had EMA."""
    work, ema_final = ema_run
    checkpoint = work / "iter_6.pth"
    saved = load_checkpoint(checkpoint)
    training, average = saved["ema_state_dict"], saved["state_dict"]
    assert not torch.equal(training["module.linear.weight"], average["linear.weight"])
    runner, log = resumed(checkpoint, tmp_path / "resumed")
    assert all(torch.equal(ema_final[key], value) for key, value in weights(runner).items())
    plain = weights(trained(tmp_path / "plain"))
    assert all(torch.equal(plain[key], value) for key, value in weights(runner).items())
    assert (
        f"WARNING - resume: {checkpoint} was saved with EMAHook and this run has none: training "
        "continues from its training weights (ema_state_dict), and the average (its "
        f"state_dict) is not kept; load_from='{checkpoint}' (weights only) loads the averaged "
        "weights"
    ) in log


def test_loading_an_ema_checkpoint_gives_the_averaged_weights(tmp_path, ema_run):
    work, _ = ema_run
    checkpoint = work / "iter_6.pth"
    runner = Runner.from_cfg(tiny_cfg(tmp_path, load_from=str(checkpoint)))
    runner.load_or_resume()
    average = load_checkpoint(checkpoint)["state_dict"]
    assert all(torch.equal(average[key], value) for key, value in weights(runner).items())


def test_resuming_an_ema_checkpoint_with_emahook_is_unchanged(tmp_path, ema_run):
    work, ema_final = ema_run
    checkpoint = work / "iter_6.pth"
    runner, log = resumed(checkpoint, tmp_path, custom_hooks=[dict(type="EMAHook", momentum=0.01)])
    assert all(torch.equal(ema_final[key], value) for key, value in weights(runner).items())
    assert "was saved with EMAHook" not in log
    (ema_hook,) = [hook for hook in runner.hooks if type(hook).__name__ == "EMAHook"]
    final = load_checkpoint(work / "iter_8.pth")["state_dict"]  # the unbroken run's average
    assert torch.equal(ema_hook.ema_model.module.linear.weight, final["linear.weight"])


def test_runner_resume_called_directly_is_a_resume_for_emahook(tmp_path, ema_run):
    work, _ = ema_run
    checkpoint = work / "iter_6.pth"
    cfg = tiny_cfg(tmp_path, custom_hooks=[dict(type="EMAHook", momentum=0.01)])
    runner = Runner.from_cfg(cfg)
    runner.call_hook("before_run")  # as train() does before it resumes (EMAHook builds its model)
    runner.resume(str(checkpoint))
    saved = load_checkpoint(checkpoint)
    (ema_hook,) = [hook for hook in runner.hooks if type(hook).__name__ == "EMAHook"]
    # the training weights to the model, the average to EMAHook, and no word of a missing hook
    assert torch.equal(
        weights(runner)["linear.weight"], saved["ema_state_dict"]["module.linear.weight"]
    )
    assert torch.equal(
        ema_hook.ema_model.module.linear.weight, saved["state_dict"]["linear.weight"]
    )
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "was saved with EMAHook" not in log and runner._resume is False


@pytest.mark.parametrize(
    ("checkpoint", "line"),
    [
        ("iter_2.pth", "2 iterations done, epoch 1 continues at batch 3 of 4"),
        ("iter_4.pth", "4 iterations done, epoch 1 ends (its 4 batches are done)"),
        ("iter_6.pth", "6 iterations done, epoch 2 continues at batch 3 of 4"),
    ],
)
def test_the_resumed_line_says_where_training_continues_in_the_logs_terms(
    tmp_path, plain_run, checkpoint, line
):
    _, log = resumed(plain_run / checkpoint, tmp_path)
    assert f"INFO - resumed from {plain_run / checkpoint}: {line}\n" in log


def test_the_resumed_line_of_an_epoch_checkpoint_and_of_iterations(tmp_path):
    by_epoch = {"default_hooks.checkpoint.by_epoch": True, "default_hooks.checkpoint.interval": 1}
    trained(tmp_path / "epochs", **{"train_cfg.max_epochs": 1}, **by_epoch)
    checkpoint = tmp_path / "epochs" / "epoch_1.pth"
    _, log = resumed(checkpoint, tmp_path / "more", **by_epoch)
    assert f"resumed from {checkpoint}: 1 epoch (4 iterations) done, epoch 2 starts\n" in log
    _, log = resumed(checkpoint, tmp_path / "done", **{"train_cfg.max_epochs": 1}, **by_epoch)
    assert f"resumed from {checkpoint}: 1 epoch (4 iterations) done, nothing left" in log
    iterations = {"train_cfg": dict(_delete_=True, by_epoch=False, max_iters=8)}
    _, log = resumed(checkpoint, tmp_path / "iters", **iterations)
    assert f"resumed from {checkpoint}: 4 iterations done, continues at iteration 5 of 8\n" in log


def test_a_changed_sampler_seed_is_named_as_not_used(tmp_path, plain_run):
    checkpoint = plain_run / "iter_6.pth"
    runner, log = resumed(checkpoint, tmp_path, **{"train_dataloader.sampler.seed": 123})
    assert runner.train_dataloader.sampler.seed == 0  # the checkpoint's
    (line,) = [line for line in log.splitlines() if "config differs" in line]
    assert line.endswith(
        f"resume: the config differs from the one {checkpoint} was saved with. Not used, the "
        "restored state wins: train_dataloader.sampler.seed (absent) -> 123 (the data order "
        "goes on with the checkpoint's sampler seed, 0, so that the resumed epochs read what "
        "the unbroken run's would). To train with the new values, start a new run from these "
        f"weights: load_from='{checkpoint}' and resume=False"
    )


def test_a_changed_randomness_seed_says_how_to_train_with_it(tmp_path, plain_run):
    checkpoint = plain_run / "iter_6.pth"
    runner, log = resumed(checkpoint, tmp_path, **{"randomness.seed": 5})
    assert runner.seed == 0
    assert (
        "WARNING - randomness.seed is 5 but the checkpoint was trained with seed 0: the "
        "resumed run continues with 0, as its random states and data order are restored "
        "(exact resume); to train with seed 5, start a new run from these weights: "
        f"load_from='{checkpoint}' and resume=False"
    ) in log


def test_a_resumed_run_without_a_seed_says_which_seed_it_continues_with(tmp_path, plain_run):
    # the start-up log shows the seed drawn for the new process, not the one the run goes on with
    checkpoint = plain_run / "iter_6.pth"
    runner, log = resumed(checkpoint, tmp_path, **{"randomness.seed": None})
    assert runner.seed == 0
    assert (
        "INFO - randomness.seed is None: the resumed run continues with the checkpoint's seed 0, "
        "not the one drawn at start-up ("
    ) in log


def test_the_config_warning_splits_what_is_used_from_what_is_not(tmp_path, plain_run):
    checkpoint = plain_run / "iter_6.pth"
    changes = {
        "optim_wrapper.optimizer.lr": 0.01,
        "default_hooks.logger.interval": 7,
        "train_dataloader.num_workers": 0,
    }
    runner, log = resumed(checkpoint, tmp_path, **changes)
    assert runner.optim_wrapper.param_groups[0]["lr"] == 0.1  # the checkpoint's
    (line,) = [line for line in log.splitlines() if "config differs" in line]
    assert line.endswith(
        f"resume: the config differs from the one {checkpoint} was saved with. Used as "
        "configured now: train_dataloader.num_workers (absent) -> 0, "
        "default_hooks.logger.interval 100 -> 7. Not used, the restored state wins: "
        "optim_wrapper.optimizer.lr 0.1 -> 0.01 (a resume restores the optimizer and the "
        "parameter schedulers as saved: exact resume, as in MMEngine). To train with the new "
        "values, start a new run from these "
        f"weights: load_from='{checkpoint}' and resume=False"
    )


def test_a_changed_shuffle_starts_the_epoch_over(tmp_path, plain_run):
    checkpoint = plain_run / "iter_6.pth"
    assert load_checkpoint(checkpoint)["dataloader"]["shuffle"] is True
    changes = {
        "train_dataloader.sampler.shuffle": False,
        "custom_hooks": [dict(type="RecordBatchIdx")],
    }
    runner, log = resumed(checkpoint, tmp_path, **changes)
    (hook,) = [hook for hook in runner.hooks if isinstance(hook, RecordBatchIdx)]
    assert hook.indices == [0, 1, 2, 3]  # all of epoch 2, in the new order
    assert (
        "WARNING - resume: train_dataloader.sampler.shuffle was True in the checkpoint and is "
        "False now: epoch 2 starts over (the sampler's order is another one)"
    ) in log
    assert "6 iterations done, epoch 2 starts over\n" in log
    assert "Used as configured now: train_dataloader.sampler.shuffle True -> False" in log


def test_a_checkpoint_without_shuffle_counts_as_unchanged(plain_run):
    """An older checkpoint lacks the key: the pass continues at the saved batch."""
    position = dict(load_checkpoint(plain_run / "iter_6.pth")["dataloader"])
    del position["shuffle"]
    runner = Runner.from_cfg(
        tiny_cfg(plain_run / "unused", **{"train_dataloader.sampler.shuffle": False})
    )
    loader = runner.train_dataloader
    assert batches_to_skip(position, loader, loader.sampler, "epoch 2") == (2, None)
    shuffled = {**position, "shuffle": True}
    skip, note = batches_to_skip(shuffled, loader, loader.sampler, "epoch 2")
    assert skip == 0 and "shuffle was True in the checkpoint and is False now" in note
    shorter = {**shuffled, "dataset_len": 6}
    _, note = batches_to_skip(shorter, loader, loader.sampler, "epoch 2")
    assert note == (
        "resume: the training set had 6 samples and has 8 now, and "
        "train_dataloader.sampler.shuffle was True in the checkpoint and is False now: epoch "
        "2 starts over (the sampler's order is another one)"
    )
    assert data_position(loader, loader.sampler, 1, 2)["shuffle"] is False
