"""Model and optimizer state in one process: the state dict functions, sharded checkpoints
saved and loaded without a process group, and the consolidate tool."""

import sys

import pytest
import torch

from runnerx.checkpoint.io import load_checkpoint
from runnerx.logging import MessageHub
from runnerx.model.examples import CharTransformerLM
from runnerx.optim import AmpOptimWrapper, OptimWrapper, OptimWrapperDict
from runnerx.parallel import (
    load_model_state_dict,
    load_optimizer_state_dict,
    load_sharded_checkpoint,
    model_state_dict,
    optimizer_state_dict,
    save_sharded_checkpoint,
)

VOCAB, LENGTH = 32, 8


def trained(seed=0, wrapper=OptimWrapper, **options):
    """A small language model and its optim wrapper after two steps (AdamW: state to save)."""
    MessageHub.get_instance("checkpoint-test")
    torch.manual_seed(seed)
    model = CharTransformerLM(vocab_size=VOCAB, block_size=LENGTH, n_layer=1, n_head=2, n_embd=8)
    optim_wrapper = wrapper(optimizer=torch.optim.AdamW(model.parameters(), lr=0.01), **options)
    tokens = torch.randint(0, VOCAB, (2, LENGTH + 1), generator=torch.Generator().manual_seed(1))
    for _ in range(2):
        model.train_step(dict(inputs=tokens[:, :-1], data_samples=tokens[:, 1:]), optim_wrapper)
    return model, optim_wrapper


def assert_same_optimizer(actual, expected):
    assert actual.keys() == expected.keys()
    # a saved tuple (AdamW's betas) may come back as a list; the optimizer takes either
    assert [as_tuples(group) for group in actual["param_groups"]] == [
        as_tuples(group) for group in expected["param_groups"]
    ]
    for index, entry in expected["state"].items():
        for key, value in entry.items():
            assert torch.equal(actual["state"][index][key], value), (index, key)


def as_tuples(group):
    return {key: tuple(value) if isinstance(value, list) else value for key, value in group.items()}


def test_plain_state_dicts_are_the_modules_own_on_the_cpu():
    model, optim_wrapper = trained()
    state = model_state_dict(model)
    assert list(state) == list(model.state_dict())
    assert all(value.device.type == "cpu" for value in state.values())
    assert optimizer_state_dict(model, optim_wrapper) == optim_wrapper.state_dict()
    other, other_optim = trained(seed=1)
    assert load_model_state_dict(other, {**state, "extra": torch.zeros(1)}) == ([], ["extra"])
    load_optimizer_state_dict(other, other_optim, optimizer_state_dict(model, optim_wrapper))
    assert_same_optimizer(other_optim.state_dict(), optim_wrapper.state_dict())


def test_a_sharded_checkpoint_round_trips_in_one_process(tmp_path):
    model, optim_wrapper = trained(wrapper=AmpOptimWrapper, dtype="float16")
    optim_wrapper.loss_scaler.update(1024.0)  # a scale the fresh wrapper does not have
    save_sharded_checkpoint(tmp_path / "shards", model, optim_wrapper, extra={"meta": {"iter": 2}})
    fresh, fresh_optim = trained(seed=1, wrapper=AmpOptimWrapper, dtype="float16")
    extra = load_sharded_checkpoint(tmp_path / "shards", fresh, fresh_optim)
    assert extra == {"meta": {"iter": 2}}
    for key, value in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[key], value), key
    assert_same_optimizer(fresh_optim.state_dict(), optim_wrapper.state_dict())
    assert fresh_optim.loss_scaler.get_scale() == 1024.0


def test_the_consolidate_tool_writes_one_file_that_loads_into_a_plain_model(tmp_path, run_in_repo):
    model, optim_wrapper = trained()
    save_sharded_checkpoint(tmp_path / "shards", model, optim_wrapper, extra={"meta": {"iter": 2}})
    out_file = tmp_path / "whole.pth"
    result = run_in_repo(
        [sys.executable, "tools/consolidate_checkpoint.py", str(tmp_path / "shards"), out_file]
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "wrote" in result.stdout
    checkpoint = load_checkpoint(out_file)
    assert checkpoint["meta"] == {"iter": 2}
    assert next(iter(checkpoint["optimizer"]["state"])) == "token_embedding.weight"  # by name
    fresh, fresh_optim = trained(seed=1)
    load_model_state_dict(fresh, checkpoint["state_dict"], strict=True)
    load_optimizer_state_dict(fresh, fresh_optim, checkpoint["optimizer"])
    for key, value in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[key], value), key
    assert_same_optimizer(fresh_optim.state_dict(), optim_wrapper.state_dict())


def test_consolidating_a_folder_that_is_not_a_sharded_checkpoint_fails_clearly(tmp_path):
    from runnerx.parallel import consolidate_checkpoint

    with pytest.raises(FileNotFoundError, match="is not a sharded checkpoint"):
        consolidate_checkpoint(tmp_path, tmp_path / "out.pth")
    with pytest.raises(FileNotFoundError, match="is not a sharded checkpoint .no such folder"):
        consolidate_checkpoint(tmp_path / "missing", tmp_path / "out.pth")


def test_consolidating_a_work_dir_or_a_checkpoint_file_says_what_to_give(tmp_path):
    from runnerx.checkpoint.io import save_checkpoint
    from runnerx.parallel import consolidate_checkpoint

    save_checkpoint({"state_dict": {"w": torch.ones(1)}}, tmp_path / "epoch_2.pth")
    with pytest.raises(FileNotFoundError) as error:
        consolidate_checkpoint(tmp_path, tmp_path / "out.pth")
    assert f"it looks like a work dir: give one of its checkpoints, such as {tmp_path}/" in str(
        error.value
    )
    with pytest.raises(ValueError, match="epoch_2.pth is already a single-file checkpoint: nothi"):
        consolidate_checkpoint(tmp_path / "epoch_2.pth", tmp_path / "out.pth")
    assert not (tmp_path / "out.pth").exists()


def test_several_optimizers_are_saved_and_loaded_by_name():
    model, first = trained()
    second = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    wrappers = OptimWrapperDict(main=first, extra=second)
    state = optimizer_state_dict(model, wrappers)
    assert set(state) == {"main", "extra"}
    fresh, fresh_first = trained(seed=1)
    fresh_wrappers = OptimWrapperDict(
        main=fresh_first, extra=OptimWrapper(torch.optim.SGD(fresh.parameters(), lr=0.5))
    )
    load_optimizer_state_dict(fresh, fresh_wrappers, state)
    assert fresh_wrappers["extra"].param_groups[0]["lr"] == 0.1
    assert_same_optimizer(fresh_first.state_dict(), first.state_dict())
