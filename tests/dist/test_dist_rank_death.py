"""A rank that dies (an exception, or SIGKILL) ends the whole torchrun job with a non-zero
exit within the configured timeout instead of leaving the other rank waiting, and the last
complete checkpoint survives and resumes."""

import os
import textwrap
import time
from pathlib import Path

import pytest

from runnerx.checkpoint.io import load_checkpoint
from runnerx.checkpoint.runner_state import find_latest_checkpoint

ROOT = Path(__file__).parents[2]
TIMEOUT = 30  # env_cfg.dist_cfg.timeout: how long a collective waits for a missing rank
STUCK_TIMEOUT = 5  # the same, for the stuck rank: the test waits for it to run out
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
        if self.how == "stuck":  # alive but gone: rank 0 waits until the collective times out
            signal.signal(signal.SIGTERM, signal.SIG_DFL)  # torchrun's SIGTERM then ends it
            time.sleep(600)
        raise RuntimeError("rank 1 fails on purpose")
'''


@pytest.mark.parametrize("how", ["exception", "sigkill", "stuck"])
def test_the_job_ends_non_zero_in_time_and_the_last_checkpoint_loads(
    tmp_path, dist_train_env, run_in_repo, how
):
    """With ``stuck``, rank 1 hangs: rank 0's collective times out after STUCK_TIMEOUT and
    rank 0 must then exit (its PreemptionHook's pending all-reduce once kept it from it), so
    that torchrun stops rank 1."""
    timeout = STUCK_TIMEOUT if how == "stuck" else TIMEOUT
    dies_at = 15 if how == "stuck" else DIES_AT  # stuck: in epoch 2, after a validation
    (tmp_path / "dying_hook.py").write_text(textwrap.dedent(HOOK_MODULE))
    work, stamp = tmp_path / "work", tmp_path / "died_at"
    env = dist_train_env(tmp_path)
    config = tmp_path / "dying.py"
    if how == "stuck":  # as a user's epoch-based run: it validates and saves after epoch 1
        loop = "train_cfg = dict(max_epochs=2)\ndefault_hooks = dict(checkpoint=dict(interval=1))\n"
    else:
        loop = (
            "train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=100000, "
            "val_interval=100000)\nparam_scheduler = None\n"
            "default_hooks = dict(checkpoint=dict(by_epoch=False, interval=5, max_keep_ckpts=-1))\n"
        )
    config.write_text(
        f"_base_ = {str(ROOT / 'configs/digits_convnet.py')!r}\n"
        + loop
        + f"env_cfg = dict(dist_cfg=dict(timeout={timeout}))\n"
        "custom_imports = dict(imports=['dying_hook'])\n"
        f"custom_hooks = [dict(type='DieAtIter', at={dies_at}, how={how!r}, "
        f"stamp={str(stamp)!r})]\n"
    )
    job = run_in_repo(
        ["bash", "tools/dist_train.sh", str(config), "2", "--work-dir", str(work)], env=env
    )
    ended = time.time()
    assert job.returncode != 0
    assert stamp.is_file(), job.stderr[-4000:]
    if how == "exception":  # rank 1 writes no log file: its stderr says why it ended
        assert "\nrank 1 failed: RuntimeError: rank 1 fails on purpose\n" in job.stderr
    limit = 3 * timeout if how == "stuck" else timeout  # the time out itself, then the exit
    assert ended - float(stamp.read_text()) < limit, "the job outlived the dead rank too long"

    latest = find_latest_checkpoint(str(work))
    saved = ("epoch_1.pth", 12) if how == "stuck" else ("iter_10.pth", 10)
    assert latest == str(work / saved[0])
    checkpoint = load_checkpoint(latest)
    assert checkpoint["meta"]["iter"] == saved[1] and checkpoint["state_dict"]
    assert not [name for name in os.listdir(work) if ".tmp" in name or "partial" in name]
