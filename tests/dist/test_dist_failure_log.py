"""What rank 0's log in the work dir says of a 2-rank torchrun job (tools/dist_train.sh) whose
rank 0 fails: that the batch size is per process, and the error that ended the job, with its
traceback, written out before the rank exits at once; the console shows the error once."""

import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[2]

HOOK_MODULE = """
from runnerx import HOOKS
from runnerx.hooks import Hook


@HOOKS.register_module()
class RankFailsAt(Hook):
    def __init__(self, rank, at):
        self.rank, self.at = rank, at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.rank == self.rank and runner.iter + 1 == self.at:
            raise RuntimeError(f"rank {self.rank} fails on purpose")
"""


def failing_job(tmp_path, dist_train_env, run_in_repo, rank):
    """tools/dist_train.sh on 2 ranks, rank ``rank`` failing in iteration 7: the finished
    job, rank 0's log and the work dir."""
    (tmp_path / "failing_hook.py").write_text(textwrap.dedent(HOOK_MODULE))
    config, work = tmp_path / "failing.py", tmp_path / "work"
    config.write_text(
        f"_base_ = {str(ROOT / 'configs/digits_convnet.py')!r}\n"
        "train_cfg = dict(_delete_=True, type='IterBasedTrainLoop', max_iters=100, "
        "val_interval=1000)\nparam_scheduler = None\n"
        "default_hooks = dict(checkpoint=dict(by_epoch=False, interval=5))\n"
        "custom_imports = dict(imports=['failing_hook'])\n"
        f"custom_hooks = [dict(type='RankFailsAt', rank={rank}, at=7)]\n"
    )
    job = run_in_repo(
        ["bash", "tools/dist_train.sh", str(config), "2", "--work-dir", str(work)],
        env=dist_train_env(tmp_path),
        timeout=120,
    )
    assert job.returncode != 0
    (log_file,) = work.glob("*/*.log")
    return job, log_file.read_text(), work


def test_rank_zeros_error_ends_its_log(tmp_path, dist_train_env, run_in_repo):
    job, log, work = failing_job(tmp_path, dist_train_env, run_in_repo, rank=0)
    assert (
        "- INFO - train_dataloader.batch_size=64 is per process: 2 processes train on 128 "
        "samples per iteration (auto_scale_lr.base_batch_size=64: --auto-scale-lr scales the "
        "lr to the samples per iteration)\n"
    ) in log, log[-3000:]
    assert (
        "train failed during the after_train_iter hooks of iteration 7 (its training step "
        f"done); the last checkpoint is {work / 'iter_5.pth'} (--resume continues from it):\n"
        "Traceback (most recent call last):\n"
    ) in log, log[-3000:]
    assert log.endswith("RuntimeError: rank 0 fails on purpose\n")
    console = job.stdout + job.stderr
    assert console.count("RuntimeError: rank 0 fails on purpose") == 1, console[-5000:]


def test_rank_zero_losing_a_failed_rank_says_where_its_error_is(
    tmp_path, dist_train_env, run_in_repo
):
    job, log, _ = failing_job(tmp_path, dist_train_env, run_in_repo, rank=1)
    assert (
        " (this rank lost its connection to another, which probably failed first: look for "
        "'rank N failed:' in the job's output, followed by that rank's traceback):\nTraceback"
    ) in log, log[-3000:]
    console = job.stdout + job.stderr
    assert "rank 1 failed: RuntimeError: rank 1 fails on purpose" in console, console[-5000:]
