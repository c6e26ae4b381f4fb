"""A rank that dies (an exception, or SIGKILL) ends the whole torchrun job with a non-zero
exit within the configured timeout instead of leaving the other rank waiting, and the last
complete checkpoint survives and resumes."""

import os
import sys
import textwrap
import time
from pathlib import Path

import pytest

from runnerx.checkpoint.io import load_checkpoint
from runnerx.checkpoint.runner_state import find_latest_checkpoint

ROOT = Path(__file__).parents[2]
TIMEOUT = 30  # env_cfg.dist_cfg.timeout: how long a collective waits for a missing rank
DIES_AT = 12  # rank 1 dies during this iteration; checkpoints every 5 iterations

HOOK_MODULE = '''
import os, signal, time
from runnerx import HOOKS
from runnerx.hooks import Hook


@HOOKS.register_module()
class DieAtIter(Hook):
    """Rank 1 dies during iteration ``at``, by ``how`` ('exception' or 'sigkill')."""

    def __init__(self, at, how, stamp):
        self.at, self.how, self.stamp = at, how, stamp

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.rank != 1 or runner.iter + 1 != self.at:
            return
        with open(self.stamp, "w") as file:
            file.write(str(time.time()))
        if self.how == "sigkill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise RuntimeError("rank 1 fails on purpose")
'''


@pytest.mark.parametrize("how", ["exception", "sigkill"])
def test_the_job_ends_non_zero_in_time_and_the_last_checkpoint_loads(
    tmp_path, free_port, run_in_repo, how
):
    (tmp_path / "dying_hook.py").write_text(textwrap.dedent(HOOK_MODULE))
    work, stamp = tmp_path / "work", tmp_path / "died_at"
    env = dict(
        os.environ,
        PORT=str(free_port()),
        OMP_NUM_THREADS="1",
        PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    )
    config = tmp_path / "dying.py"
    config.write_text(
        f"_base_ = {str(ROOT / 'configs/digits_convnet.py')!r}\n"
        "train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=100000, "
        "val_interval=100000)\n"
        "param_scheduler = None\n"
        "default_hooks = dict(checkpoint=dict(by_epoch=False, interval=5, max_keep_ckpts=-1))\n"
        f"env_cfg = dict(dist_cfg=dict(timeout={TIMEOUT}))\n"
        "custom_imports = dict(imports=['dying_hook'])\n"
        f"custom_hooks = [dict(type='DieAtIter', at={DIES_AT}, how={how!r}, "
        f"stamp={str(stamp)!r})]\n"
    )
    job = run_in_repo(
        ["bash", "tools/dist_train.sh", str(config), "2", "--work-dir", str(work)], env=env
    )
    ended = time.time()
    assert job.returncode != 0
    assert stamp.is_file(), job.stderr[-4000:]
    assert ended - float(stamp.read_text()) < TIMEOUT, "the job outlived the dead rank too long"

    latest = find_latest_checkpoint(str(work))
    assert latest == str(work / "iter_10.pth")
    checkpoint = load_checkpoint(latest)
    assert checkpoint["meta"]["iter"] == 10 and checkpoint["state_dict"]
    assert not [name for name in os.listdir(work) if ".tmp" in name or "partial" in name]
