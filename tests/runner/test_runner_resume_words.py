"""``resume='last'`` / ``'auto'`` in the Runner: the words of Lightning's ``ckpt_path`` and
OpenMMLab's ``--resume``."""

from pathlib import Path

import pytest

from runnerx.runner import Runner
from tests.runner import test_runner_resume
from tests.runner.test_runner_resume import digits_cfg

one_epoch = test_runner_resume.one_epoch  # the fixture: the digits example trained one epoch


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
