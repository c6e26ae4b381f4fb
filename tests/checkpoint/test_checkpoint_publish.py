"""tools/publish_model.py: keeps the weights (dtype unchanged) and a small meta, names the file
after the sha256 of its bytes and prints the path."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pytest
import torch

from runnerx.checkpoint import load_checkpoint, save_checkpoint
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]


publish_model = load_tool("publish_model")


def training_checkpoint() -> dict:
    return {
        "meta": {
            "epoch": 3,
            "iter": 60,
            "seed": 0,
            "cfg": "model = dict(type='Net')\nwork_dir = '/home/me/private'\n",
            "experiment_name": "digits_20240101_000000",
            "dataset_meta": {"classes": ("0", "1")},
            "runnerx_version": "0.1.0",
        },
        "state_dict": {
            "conv.weight": torch.randn(4, 3, dtype=torch.float16),
            "head.bias": torch.randn(2, dtype=torch.bfloat16),
        },
        "ema_state_dict": {"module.conv.weight": torch.randn(4, 3)},
        "optimizer": {"state": {0: {"momentum_buffer": torch.randn(4, 3)}}, "param_groups": []},
        "param_schedulers": [{"last_step": 60}],
        "message_hub": {"log_scalars": {}, "runtime_info": {}},
        "rng_states": [{"torch": torch.get_rng_state()}],
        "dataloader": {"epoch": 3, "batches": 0},
    }


def test_publish_model_strips_training_state_and_names_the_file_by_its_hash(tmp_path, run_in_repo):
    source = tmp_path / "epoch_3.pth"
    checkpoint = training_checkpoint()
    save_checkpoint(checkpoint, source)
    result = run_in_repo(
        [sys.executable, "tools/publish_model.py", str(source), str(tmp_path / "digits.pth")]
    )
    assert result.returncode == 0, result.stderr
    final = Path(result.stdout.strip())
    assert re.fullmatch(r"digits-[0-9a-f]{8}\.pth", final.name) and final.parent == tmp_path
    assert hashlib.sha256(final.read_bytes()).hexdigest()[:8] == final.stem[-8:]
    assert not (tmp_path / "digits.pth").exists()
    assert "left out: dataloader, ema_state_dict, message_hub, optimizer" in result.stderr

    published = load_checkpoint(final)
    assert set(published) == {"meta", "state_dict"}
    assert set(published["meta"]) == {
        "epoch",
        "iter",
        "experiment_name",
        "dataset_meta",
        "runnerx_version",
    }  # no config text (paths), no seed
    for key, tensor in checkpoint["state_dict"].items():
        assert published["state_dict"][key].dtype == tensor.dtype
        assert torch.equal(published["state_dict"][key], tensor)
    assert final.stat().st_size < source.stat().st_size


def test_publishing_again_gives_the_same_file(tmp_path):
    source = tmp_path / "in.pth"
    save_checkpoint(training_checkpoint(), source)
    first = publish_model.main([str(source), str(tmp_path / "a" / "model.pth")])
    second = publish_model.main([str(source), str(tmp_path / "b" / "model.pth")])
    assert Path(first).read_bytes() == Path(second).read_bytes()
    assert Path(first).name == Path(second).name


def test_an_unsafe_checkpoint_needs_the_flag(tmp_path):
    source = tmp_path / "in.pth"
    save_checkpoint({"state_dict": {"w": torch.ones(1)}, "meta": {"f": print}}, source)
    with pytest.raises(SystemExit, match=r"^tools/publish_model.py: refused .*builtins\.print"):
        publish_model.main([str(source), str(tmp_path / "out.pth")])  # one line, no traceback
    final = publish_model.main([str(source), str(tmp_path / "out.pth"), "--unsafe-load"])
    assert load_checkpoint(final)["state_dict"]["w"].item() == 1.0


def test_a_bare_state_dict_is_published_and_a_file_without_weights_is_refused(tmp_path):
    weights = {"fc.weight": torch.ones(2, 3), "fc.bias": torch.zeros(2)}
    save_checkpoint(weights, tmp_path / "bare.pth")
    final = publish_model.main([str(tmp_path / "bare.pth"), str(tmp_path / "out.pth")])
    assert list(load_checkpoint(final)) == ["state_dict"]
    assert torch.equal(load_checkpoint(final)["state_dict"]["fc.weight"], weights["fc.weight"])
    save_checkpoint({"optimizer": {"state": {}}}, tmp_path / "optimizer.pth")
    with pytest.raises(
        SystemExit,
        match=r"optimizer.pth has no 'state_dict' \(its entries: "
        r"optimizer\): there are no weights to publish",
    ):
        publish_model.main([str(tmp_path / "optimizer.pth"), str(tmp_path / "none.pth")])


def test_a_sharded_checkpoint_folder_is_named_with_the_command_that_makes_one_file(tmp_path):
    from runnerx.parallel import save_sharded_checkpoint

    model = torch.nn.Linear(3, 2)
    folder = tmp_path / "epoch_1.pth"
    save_sharded_checkpoint(folder, model, extra={"meta": {"epoch": 1}})
    with pytest.raises(SystemExit, match="it is a sharded checkpoint") as error:
        publish_model.main([str(folder), str(tmp_path / "model.pth")])
    command = re.search(r"python (tools/consolidate_checkpoint\.py) (\S+) (\S+)$", str(error.value))
    assert command and command.group(2) == str(folder), str(error.value)
    # the command it names makes a file that publishes
    load_tool("consolidate_checkpoint").main([command.group(2), command.group(3)])
    final = publish_model.main([command.group(3), str(tmp_path / "model.pth")])
    assert torch.equal(load_checkpoint(final)["state_dict"]["weight"], model.weight.detach())


def test_a_work_dir_given_as_the_checkpoint_names_one_of_its_files(tmp_path):
    save_checkpoint(training_checkpoint(), tmp_path / "epoch_3.pth")
    with pytest.raises(SystemExit, match="a folder, not a checkpoint file") as error:
        publish_model.main([str(tmp_path), str(tmp_path / "model.pth")])
    hint = f"looks like a work dir: give one of its checkpoints, such as {tmp_path / 'epoch_3.pth'}"
    assert hint in str(error.value)


def test_save_keys_keeps_the_entries_named_with_the_small_meta(tmp_path, capsys):
    source = tmp_path / "epoch_3.pth"
    save_checkpoint(training_checkpoint(), source)
    out = str(tmp_path / "model.pth")
    final = publish_model.main([str(source), out, "--save-keys", "meta", "state_dict", "extra"])
    assert "--save-keys: " + str(source) + " has no extra" in capsys.readouterr().err
    assert load_checkpoint(final).keys() == {"meta", "state_dict"}
    assert "cfg" not in load_checkpoint(final)["meta"]
    final = publish_model.main([str(source), out, "--save-keys", "state_dict", "message_hub"])
    assert load_checkpoint(final).keys() == {"state_dict", "message_hub"}


def test_a_missing_checkpoint_is_one_line_and_exit_code_1(tmp_path, run_in_repo):
    missing = tmp_path / "missing.pth"
    result = run_in_repo(
        [sys.executable, "tools/publish_model.py", str(missing), str(tmp_path / "out.pth")]
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.startswith(f"tools/publish_model.py: checkpoint not found: {missing}")
    assert len(result.stderr.splitlines()) == 1


def test_a_corrupted_checkpoint_is_one_line_and_not_published(tmp_path):
    from tests.checkpoint.test_checkpoint_verify import flip_a_byte_of

    source = tmp_path / "epoch_3.pth"
    save_checkpoint(training_checkpoint(), source)
    flip_a_byte_of(source, "/data/0")
    with pytest.raises(SystemExit, match=r"epoch_3.pth is corrupted: .* publish an intact copy"):
        publish_model.main([str(source), str(tmp_path / "model.pth")])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["epoch_3.pth"]
