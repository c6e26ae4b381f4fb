"""limit_batches in train_cfg, val_cfg and test_cfg (Lightning's limit_train_batches,
limit_val_batches, limit_test_batches): each pass reads its first batches only; schedulers,
the log and the evaluator see the limited pass; a resume inside a limited epoch is exact."""

import math
import re

import pytest
import torch
from torch.utils.data import Dataset

from runnerx import Config
from runnerx.hooks import Hook
from runnerx.runner import Runner
from tests.hooks.test_hooks_with_runner import make_runner
from tests.runner.test_runner_fast_dev_run import counter, log_text, saved_checkpoints, smoke_cfg
from tests.runner.test_runner_resume import (
    assert_same,
    final_state,
    interrupted_then_resumed,
)
from tests.runner.test_runner_resume import digits_cfg as resume_cfg

TRAIN_BATCHES = 23  # the digits example: 1,437 training samples in batches of 64


def limited_cfg(cfg: Config, train=None, val=None, test=None) -> Config:
    """The digits config counting iterations and samples, with those limits, not smoke-run."""
    cfg = smoke_cfg(cfg, False)
    cfg.train_cfg.max_epochs = 2
    cfg.param_scheduler = [
        dict(type="CosineAnnealingLR", by_epoch=True, convert_to_iter_based=True, T_max=2)
    ]
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    for stage, limit in (("train", train), ("val", val), ("test", test)):
        if limit is not None:
            cfg[f"{stage}_cfg"].limit_batches = limit
    return cfg


@pytest.mark.parametrize(("limit", "batches"), [(4, 4), (0.25, 5), (1.0, TRAIN_BATCHES), (99, 23)])
def test_each_epoch_reads_its_first_batches_and_everything_sees_the_shorter_epoch(
    digits_cfg, limit, batches
):
    runner = Runner.from_cfg(limited_cfg(digits_cfg, train=limit))
    runner.train()
    assert len(runner.train_dataloader) == batches
    assert runner.iter == counter(runner).iters["train"] == runner.max_iters == 2 * batches
    assert runner.epoch == 2
    # the cosine schedule, converted to iterations with the limited epoch length (T_max and
    # its end, max_epochs, become 2 * batches iterations): its last step is the one before it
    last = 2 * batches - 1
    expected_lr = 0.1 * (1 + math.cos(math.pi * last / (2 * batches))) / 2
    assert runner.optim_wrapper.get_lr()["lr"][0] == pytest.approx(expected_lr, rel=1e-9)
    assert re.search(rf"Epoch\(train\) +\[2\]\[ *\d+/{batches}\]", log_text(digits_cfg.work_dir))
    # unlike fast_dev_run, a limited run saves its checkpoints
    assert [path.name for path in saved_checkpoints(digits_cfg.work_dir)][-2:] == [
        "epoch_2.pth",
        "last_checkpoint",
    ]


def test_validation_and_test_evaluate_their_first_batches(digits_cfg):
    # 360 validation samples in batches of 32: 12 batches
    cfg = limited_cfg(digits_cfg, train=2, val=3, test=0.5)
    runner = Runner.from_cfg(cfg)
    runner.train()
    count = counter(runner)
    assert count.iters["val"] == 2 * 3  # two validations of 3 batches
    assert [v["count/samples"] for v in count.validations] == [96, 96]
    assert [v["count/size"] for v in count.validations] == [96, 96]
    metrics = runner.test()
    assert count.iters["test"] == 6 and metrics == {"count/samples": 192, "count/size": 192}


def test_fast_dev_run_takes_the_smaller_of_the_two_limits(digits_cfg):
    cfg = limited_cfg(digits_cfg, val=2)
    cfg.fast_dev_run = 5
    runner = Runner.from_cfg(cfg)
    runner.train()
    count = counter(runner)
    assert (count.iters["train"], count.iters["val"]) == (5, 2)
    assert count.validations[0]["count/size"] == 64  # 2 batches of 32, not 5


def test_a_resume_inside_a_limited_epoch_is_exact(tmp_path):
    # epochs of 8 batches, a checkpoint every 5 iterations; interrupted after 13: resumed
    # from iteration 10, 2 batches into epoch 2, it reads that epoch's last 6
    changes = {"train_cfg.limit_batches": 8}
    expected = final_state(resume_cfg(tmp_path / "straight", **changes))
    resumed = interrupted_then_resumed(resume_cfg(tmp_path / "resumed", **changes), at=13)
    assert_same(expected, resumed)


@pytest.mark.parametrize("value", [0, -2, 1.5, 0.0, True, "3"])
@pytest.mark.parametrize("stage", ["train", "val", "test"])
def test_a_bad_limit_is_an_error_naming_the_key(digits_cfg, stage, value):
    cfg = smoke_cfg(digits_cfg, False)
    cfg[f"{stage}_cfg"].limit_batches = value
    runner = Runner.from_cfg(cfg)
    with pytest.raises(ValueError, match=rf"{stage}_cfg.limit_batches must be None"):
        getattr(runner, f"{stage}_loop")


def test_an_iteration_based_loop_refuses_the_limit_and_says_what_to_set(digits_cfg):
    cfg = smoke_cfg(digits_cfg, False)
    cfg.train_cfg = dict(by_epoch=False, max_iters=10, limit_batches=4)
    with pytest.raises(ValueError, match=r"no epochs: lower train_cfg.max_iters instead"):
        Runner.from_cfg(cfg).train_loop  # noqa: B018


def test_a_share_of_a_dataloader_without_length_is_an_error():
    from runnerx.runner.batch_limits import batch_limit

    with pytest.raises(ValueError, match=r"val_cfg.limit_batches=0.5 is a share of an epoch"):
        batch_limit(0.5, iter([1, 2]), "val_cfg.limit_batches")
    assert batch_limit(3, iter([1, 2]), "val_cfg.limit_batches") == 3


class ScaledPoints(Dataset):
    """Eight points, multiplied by ``pipeline`` (what a hook switches)."""

    def __init__(self):
        self.pipeline = 1.0

    def __len__(self):
        return 8

    def __getitem__(self, index):
        point = torch.full((2,), float(index + 1)) * self.pipeline
        return dict(inputs=point, labels=point.sum())


class PipelineSwitchHook(Hook):
    """mmdet's PipelineSwitchHook, its body as mmdet writes it, recording the inputs."""

    def __init__(self, switch_epoch):
        self.switch_epoch = switch_epoch
        self._restart_dataloader = False
        self._has_switched = False
        self.largest = {}  # epoch -> the largest input it read

    def before_train_epoch(self, runner):
        train_loader = runner.train_dataloader
        if runner.epoch >= self.switch_epoch and not self._has_switched:
            train_loader.dataset.pipeline = 10.0
            if train_loader.persistent_workers is True:
                train_loader._DataLoader__initialized = False
                train_loader._iterator = None
                self._restart_dataloader = True
            self._has_switched = True
        elif self._restart_dataloader:
            train_loader._DataLoader__initialized = True

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        largest = float(torch.stack(data_batch["inputs"]).max())
        self.largest[runner.epoch] = max(self.largest.get(runner.epoch, 0.0), largest)


def test_a_hook_restarting_persistent_workers_restarts_the_limited_dataloader(tmp_path):
    # the hook's writes reach the DataLoader under the limited view, so its persistent worker
    # is restarted with the switched dataset, as without limit_batches
    hook = PipelineSwitchHook(switch_epoch=1)
    runner = make_runner(
        tmp_path,
        train_dataloader=dict(
            dataset=ScaledPoints(),
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_size=2,
            num_workers=1,
            persistent_workers=True,
        ),
        train_cfg=dict(by_epoch=True, max_epochs=3, limit_batches=2),
        custom_hooks=[hook],
    )
    runner.train()
    assert hook.largest == {0: 4.0, 1: 40.0, 2: 40.0}
    assert not {"_iterator", "_DataLoader__initialized"} & set(vars(runner.train_dataloader))
