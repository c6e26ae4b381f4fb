"""Hooks with Lightning's ``state_dict()`` / ``load_state_dict(state)``: their state is saved in
every checkpoint under ``hook_states`` and taken back on resume only (not by load_from)."""

from __future__ import annotations

from pathlib import Path

import torch

from runnerx.hooks import Hook
from tests.checkpoint.conftest import ITERS_PER_EPOCH


class Counter(Hook):
    """A Lightning Callback with state: counts training iterations by ``step``."""

    def __init__(self, step: int = 1) -> None:
        self.step, self.n, self.loaded = step, 0, []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.n += self.step

    def state_dict(self) -> dict:
        return {"n": self.n}

    def load_state_dict(self, state: dict) -> None:
        self.loaded.append(state)
        self.n = state["n"]


class Keyed(Counter):
    state_key = "keyed_counter"  # Lightning's name for the entry


def log_of(runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def saved(work_dir: Path, name: str) -> dict:
    return torch.load(work_dir / name, weights_only=True)


def test_a_resume_carries_the_state_on_as_lightning_does(make_runner, tmp_path):
    make_runner(max_epochs=2, custom_hooks=[Counter()]).train()
    assert saved(tmp_path / "work", "epoch_2.pth")["hook_states"] == {"Counter": {"n": 8}}
    counter = Counter()
    make_runner(max_epochs=3, custom_hooks=[counter], resume=True).train()
    assert counter.loaded == [{"n": 2 * ITERS_PER_EPOCH}]
    assert counter.n == 3 * ITERS_PER_EPOCH  # the unbroken run's count


def test_two_hooks_of_one_class_and_a_state_key_do_not_clash(make_runner, tmp_path):
    make_runner(max_epochs=1, custom_hooks=[Counter(1), Counter(10), Keyed(100)]).train()
    assert saved(tmp_path / "work", "epoch_1.pth")["hook_states"] == {
        "Counter": {"n": 4},
        "Counter#2": {"n": 40},
        "keyed_counter": {"n": 400},
    }
    hooks = [Counter(1), Counter(10), Keyed(100)]
    make_runner(max_epochs=2, custom_hooks=hooks, resume=True).train()
    assert [hook.n for hook in hooks] == [8, 80, 800]


def test_a_saved_state_no_hook_takes_is_one_warning_naming_it(make_runner):
    make_runner(max_epochs=1, custom_hooks=[Counter(), Counter(), Keyed()]).train()
    resumed = make_runner(max_epochs=2, custom_hooks=[Counter()], resume=True)
    resumed.train()
    warnings = [line for line in log_of(resumed).splitlines() if "this run does not have" in line]
    assert len(warnings) == 1
    assert "(Counter#2, keyed_counter), so it is not restored" in warnings[0]
    assert "add those hooks to custom_hooks" in warnings[0]


def test_load_from_and_a_checkpoint_without_the_entry_leave_the_hook_as_it_is(
    make_runner, tmp_path
):
    make_runner(max_epochs=1, custom_hooks=[Counter()]).train()
    path = tmp_path / "work" / "epoch_1.pth"
    weights = make_runner(max_epochs=1, work_dir=str(tmp_path / "other"), load_from=str(path))
    counter = Counter()
    weights.register_hook(counter)
    weights.train()  # Lightning restores callbacks on fit(ckpt_path=...) only
    assert counter.loaded == [] and counter.n == ITERS_PER_EPOCH
    checkpoint = torch.load(path, weights_only=True)
    del checkpoint["hook_states"]  # as MMEngine's checkpoints are
    torch.save(checkpoint, path)
    counter = Counter()
    make_runner(max_epochs=2, custom_hooks=[counter], resume=str(path)).train()
    assert counter.loaded == [] and counter.n == ITERS_PER_EPOCH
