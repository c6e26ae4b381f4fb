"""``load_from`` a checkpoint that holds no weights of the model: refused naming what it holds
and, for a prefix the model's keys lack, how to drop it; a compiled model's prefix is dropped."""

import pytest
import torch

from runnerx.checkpoint import load_checkpoint, save_checkpoint
from runnerx.runner import Runner
from tests.runner import test_runner_resume
from tests.runner.test_runner_resume import digits_cfg

one_epoch = test_runner_resume.one_epoch  # the fixture: the digits example trained one epoch


def test_load_from_a_checkpoint_without_this_models_weights_is_refused(tmp_path, one_epoch):
    optimizer_only = tmp_path / "optimizer.pth"
    save_checkpoint({"optimizer": load_checkpoint(one_epoch)["optimizer"]}, optimizer_only)
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work", load_from=str(optimizer_only)))
    with pytest.raises(
        ValueError,
        match=rf"^load_from: {optimizer_only} holds no weights of "
        r"DigitsConvNet \(none of its \d+ keys is there; the checkpoint's "
        r"entries: optimizer\); give a training checkpoint",
    ):
        runner.test()

    # the weights of a torch.compile'd model load as they are (the default drops '_orig_mod.')
    weights = load_checkpoint(one_epoch)["state_dict"]
    compiled = tmp_path / "compiled.pth"
    save_checkpoint({f"_orig_mod.{k}": v for k, v in weights.items()}, compiled)
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work2", load_from=str(compiled)))
    runner.test()
    loaded = runner.unwrapped_model.state_dict()["features.0.weight"]
    assert torch.equal(loaded, weights["features.0.weight"])

    # another framework's prefix ('model.' of a LightningModule) is named, with its cure
    prefixed = tmp_path / "prefixed.pth"
    save_checkpoint({"state_dict": {f"model.{k}": v for k, v in weights.items()}}, prefixed)
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work3", load_from=str(prefixed)))
    with pytest.raises(ValueError) as caught:
        runner.test()
    assert "; its weights' keys start with 'model.': model.features.0.weight" in str(caught.value)
    assert str(caught.value).endswith(
        "drop it when loading: runner.load_checkpoint(path, revise_keys=[(r'^module\\.', ''), "
        "(r'^model\\.', '')]), or save the weights without it"
    )
    runner.load_checkpoint(str(prefixed), revise_keys=[(r"^model\.", "")])
    loaded = runner.unwrapped_model.state_dict()["features.0.weight"]
    assert torch.equal(loaded, weights["features.0.weight"])


def test_a_checkpoint_loaded_by_hand_is_kept_over_the_configs_load_from(tmp_path, one_epoch):
    # the config names a file that is not there: acting on it after the explicit call fails
    missing = str(tmp_path / "missing.pth")
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work", load_from=missing, resume=True))
    runner.resume(str(one_epoch))
    runner.train()  # goes on from epoch 1, as MMEngine's does
    assert (runner.epoch, runner.iter) == (2, 46)

    runner = Runner.from_cfg(digits_cfg(tmp_path / "work2", load_from=missing))
    runner.load_checkpoint(str(one_epoch))
    runner.test()
    loaded = runner.unwrapped_model.state_dict()["features.0.weight"]
    assert torch.equal(loaded, load_checkpoint(one_epoch)["state_dict"]["features.0.weight"])


def test_evaluating_a_checkpoint_of_another_shape_is_refused_but_fine_tuning_skips(
    tmp_path, one_epoch
):
    # another model's checkpoint: tools/test.py must not report a metric of untrained weights
    narrow = {"model.channels": (8, 16), "train_cfg.max_epochs": 1}
    runner = Runner.from_cfg(digits_cfg(tmp_path / "test", load_from=str(one_epoch), **narrow))
    with pytest.raises(ValueError) as caught:
        runner.test()
    message = str(caught.value)
    assert message.startswith(f"load_from: {one_epoch} does not fit this config's model, so ")
    assert "the model's 6 weight tensors have another shape there (classifier.weight: " in message

    # training from it fine-tunes: the tensors of another shape are skipped with a warning
    runner = Runner.from_cfg(digits_cfg(tmp_path / "train", load_from=str(one_epoch), **narrow))
    runner.train()
    assert runner.epoch == 1
    log = next((tmp_path / "train").glob("*/*.log")).read_text()
    assert "checkpoint tensor(s) whose shape differs from the model's were not loaded" in log
