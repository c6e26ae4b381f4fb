"""Loading (``load_from``) or resuming a checkpoint whose weights hold NaN/inf says so in a
warning naming the file and, when the run recorded one, the last checkpoint saved while the
losses were finite, with the command that uses it."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from runnerx.hooks.checkpoint_hook import LAST_FINITE_CKPT


def the_log(runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


@pytest.fixture
def diverged(make_runner, tmp_path):
    """A real run's ``epoch_1.pth`` (finite) and ``epoch_2.pth``, made to hold a NaN weight,
    whose history names ``epoch_1.pth`` as the last finite checkpoint (what LoggerHook records
    once the logged losses turn NaN)."""
    make_runner(max_epochs=2).train()
    good, bad = tmp_path / "work" / "epoch_1.pth", tmp_path / "work" / "epoch_2.pth"
    checkpoint = torch.load(bad, weights_only=True)
    checkpoint["state_dict"]["linear.weight"][0, 0] = float("nan")
    checkpoint["message_hub"]["runtime_info"][LAST_FINITE_CKPT] = str(good)
    torch.save(checkpoint, bad)
    return good, bad


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_loading_diverged_weights_warns_and_names_the_finite_checkpoint(
    make_runner, diverged, tmp_path, value
):
    good, bad = diverged
    checkpoint = torch.load(bad, weights_only=True)
    checkpoint["state_dict"]["linear.bias"][1] = value
    checkpoint["state_dict"]["linear.weight"][0, 0] = 0.5  # only the bias is not finite
    torch.save(checkpoint, bad)
    runner = make_runner(work_dir=str(tmp_path / "test"))
    runner.load_checkpoint(str(bad))
    assert (
        f"WARNING - load_from: {bad} holds NaN/inf weights: training had diverged when it was "
        f"saved; the last checkpoint saved while the losses were finite is {good}: test it with "
        f"tools/test.py CONFIG {good}, or resume training from it with --resume {good}\n"
    ) in the_log(runner)


def test_resuming_diverged_weights_warns_with_the_resume_that_uses_the_finite_checkpoint(
    make_runner, diverged, tmp_path
):
    good, bad = diverged
    runner = make_runner(max_epochs=3, work_dir=str(tmp_path / "resumed"))
    runner.resume(str(bad))
    assert (
        f"WARNING - resume: {bad} holds NaN/inf weights: training had diverged when it was "
        f"saved; resume from the last checkpoint saved while the losses were finite instead: "
        f"--resume {good} (resume='{good}')\n"
    ) in the_log(runner)


def test_a_finite_checkpoint_that_is_gone_is_not_offered(make_runner, diverged, tmp_path):
    good, bad = diverged
    good.unlink()
    runner = make_runner(work_dir=str(tmp_path / "test"))
    runner.load_checkpoint(str(bad))
    assert (
        f"diverged when it was saved; {good}, the last checkpoint saved while the losses were "
        "finite, is gone\n"
    ) in the_log(runner)


def test_finite_weights_load_and_resume_without_a_warning(make_runner, diverged, tmp_path):
    good, _ = diverged
    runner = make_runner(max_epochs=3, work_dir=str(tmp_path / "again"))
    runner.load_checkpoint(str(good))
    runner.resume(str(good))
    assert "NaN" not in the_log(runner)
    assert f"resumed from {good}" in the_log(runner)  # the log is the one read above


def test_runner_load_checkpoint_takes_mmengines_map_location_second(
    make_runner, diverged, tmp_path
):
    # MMEngine: load_checkpoint(filename, map_location='cpu', strict=False, revise_keys=...);
    # 'cpu' in second place must not become a truthy strict=
    good, _ = diverged
    checkpoint = torch.load(good, weights_only=True)
    del checkpoint["state_dict"]["linear.bias"]
    partial = tmp_path / "partial.pth"
    torch.save(checkpoint, partial)
    runner = make_runner(work_dir=str(tmp_path / "mapped"))
    runner.load_checkpoint(str(partial), "cpu")
    assert "missing keys in the checkpoint" in the_log(runner)
    assert torch.equal(runner.model.linear.weight, checkpoint["state_dict"]["linear.weight"])
    with pytest.raises(RuntimeError, match="linear.bias"):
        runner.load_checkpoint(str(partial), "cpu", True)
