"""What a resume warns about: schedulers whose restored end differs from the one the config
builds (a run resumed with a longer train_cfg.max_iters), a config diff without the noise of
an emptied list, and random states of another number of ranks.

The run: a linear classifier on 8 samples in batches of 2, 8 iterations, a checkpoint every
4, from a plain-data config (its text is saved in the checkpoints)."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace

import pytest

from runnerx import HOOKS, Config
from runnerx.checkpoint.config_changes import warn_of_config_changes
from runnerx.checkpoint.runner_state import _restore_rng
from runnerx.hooks import Hook
from runnerx.runner import Runner
from runnerx.runner.environment import capture_rng_state
from tests.checkpoint.tiny_config import tiny_run_config

#: a cosine schedule without ``end``: it ends at train_cfg.max_iters
COSINE = dict(type="CosineAnnealingLR", by_epoch=False, eta_min=0.001)


@HOOKS.register_module(force=True)
class RecordLr(Hook):
    """Keeps the learning rate of every training iteration (``lrs``)."""

    def __init__(self):
        self.lrs = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.lrs.append(runner.optim_wrapper.get_lr()["lr"][0])


def tiny_cfg(work_dir: Path, max_iters: int = 8, **changes) -> Config:
    train_cfg = dict(by_epoch=False, max_iters=max_iters)
    cfg = tiny_run_config(work_dir, train_cfg, dict(lr=0.1), 4, param_scheduler=[COSINE])
    cfg.merge_from_dict(changes)
    return cfg


def resumed(checkpoint: Path, work_dir: Path, **changes) -> tuple[Runner, list[str]]:
    """Resume ``checkpoint`` in ``work_dir`` with ``changes`` and train to the end: the runner
    and the warnings of its log."""
    runner = Runner.from_cfg(tiny_cfg(work_dir, resume=str(checkpoint), **changes))
    runner.train()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    return runner, [line for line in log.splitlines() if " - WARNING - " in line]


@pytest.fixture(scope="module")
def short_run(tmp_path_factory) -> Path:
    """iter_4.pth of an 8-iteration run, 4 iterations into its cosine schedule."""
    work = tmp_path_factory.mktemp("short")
    Runner.from_cfg(tiny_cfg(work)).train()
    return work / "iter_4.pth"


def test_a_longer_run_names_the_schedule_that_keeps_the_old_end(tmp_path, short_run):
    record = dict(type="RecordLr")
    runner, warnings = resumed(short_run, tmp_path, max_iters=12, custom_hooks=[record])
    (line,) = [line for line in warnings if "as restored" in line]
    assert line.split(" - WARNING - ")[1] == (
        "resume: param_scheduler[0] (CosineAnnealingLR) ends at iteration 8 as restored, 12 as "
        "configured now: its lr stays at its last value after that. The schedulers restored "
        f"from {short_run} keep the ends of the run that saved it (as in MMEngine; an end left "
        "out of param_scheduler was that run's train_cfg.max_iters / max_epochs). To schedule "
        "the rest of the training anew, train it as a new run from these weights: "
        f"load_from='{short_run}', resume=False and a train_cfg of the iterations still to "
        "train (the optimizer's state and the schedules start over)"
    )
    (hook,) = [hook for hook in runner.hooks if isinstance(hook, RecordLr)]
    # what the warning says: iterations 5 to 8 anneal, 9 to 12 keep iteration 8's lr
    assert hook.lrs[0] > hook.lrs[1] > hook.lrs[2] > hook.lrs[3] > 0.001
    assert hook.lrs[4:] == [hook.lrs[3]] * 4


def test_a_run_resumed_with_its_own_length_warns_of_no_schedule(tmp_path, short_run):
    _, warnings = resumed(short_run, tmp_path)
    assert not [line for line in warnings if "as restored" in line]


def test_an_explicit_end_changed_is_named_once(tmp_path, short_run):
    cosine = dict(COSINE, end=10)
    _, warnings = resumed(short_run, tmp_path, param_scheduler=[cosine], max_iters=6)
    (line,) = [line for line in warnings if "end" in line]
    assert (
        "resume: param_scheduler[0] (CosineAnnealingLR) ends at iteration 8 as restored, 10 as "
        "configured now: it does not finish by the end of this run (iteration 6). The "
    ) in line
    assert not [line for line in warnings if "config differs" in line]


def changes_warning(saved: str, now: str) -> list[str]:
    messages = []
    logger = SimpleNamespace(warning=messages.append)
    runner = SimpleNamespace(cfg_text=now, logger=logger)
    warn_of_config_changes(runner, "iter_4.pth", saved, optimizer=True, schedulers=True)
    return messages


def test_a_removed_hook_is_named_without_its_emptied_list():
    (message,) = changes_warning(
        "custom_hooks = [dict(type='RaiseOnRankHook', rank=1)]\n", "custom_hooks = []\n"
    )
    assert message == (
        "resume: the config differs from the one iter_4.pth was saved with. Used as configured "
        "now: custom_hooks.0.type 'RaiseOnRankHook' -> (absent), custom_hooks.0.rank 1 -> "
        "(absent)"
    )
    (message,) = changes_warning("model = dict(init_cfg=dict())\n", "model = dict(x=1)\n")
    assert "model.init_cfg {} -> (absent)" in message  # nothing inside it is named


def test_random_states_of_one_rank_are_counted_in_the_singular():
    messages = []
    logger = logging.getLogger("test_checkpoint_resume_warnings")
    logger.warning = messages.append
    runner = SimpleNamespace(world_size=2, rank=1, logger=logger)
    _restore_rng(runner, [capture_rng_state()])
    assert messages[0].startswith("the checkpoint holds random states of 1 rank but this run has 2")
