"""``resume='last'`` / ``'auto'`` in the Runner: the words of Lightning's ``ckpt_path`` and
OpenMMLab's ``--resume``."""

from pathlib import Path

import pytest

from runnerx.runner import Runner
from tests.runner.test_runner_resume import digits_cfg


@pytest.fixture
def one_epoch(tmp_path) -> Path:
    """The digits example trained for one epoch in ``tmp_path/first``: its epoch_1.pth."""
    cfg = digits_cfg(tmp_path / "first", **{"train_cfg.max_epochs": 1})
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    Runner.from_cfg(cfg).train()
    return tmp_path / "first" / "epoch_1.pth"


@pytest.mark.parametrize("word", ["last", "auto"])
def test_resume_last_or_auto_resumes_the_newest_checkpoint(tmp_path, one_epoch, word):
    # Lightning's ckpt_path='last', OpenMMLab's --resume auto: resume=True's meaning
    cfg = digits_cfg(one_epoch.parent, resume=word)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    runner = Runner.from_cfg(cfg)
    runner.train()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert f"resumed from {one_epoch}: 1 epoch (23 iterations) done, " in log


def test_resume_last_needs_a_checkpoint_where_auto_starts_afresh(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"resume='last': .* has no last_checkpoint file"):
        Runner.from_cfg(digits_cfg(tmp_path / "last", resume="last")).train()
    cfg = digits_cfg(tmp_path / "auto", resume="auto", **{"train_cfg.max_epochs": 1})
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 23
