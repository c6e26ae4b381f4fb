"""fast_dev_run: N training iterations, one validation of N batches, N test batches, no
checkpoints, a log line per iteration; from the config, the Runner, the tools and two ranks."""

import argparse
import os
import re
import sys
from pathlib import Path

import pytest

from runnerx import HOOKS, LOOPS, METRICS, Config
from runnerx.evaluator import BaseMetric
from runnerx.hooks import Hook
from runnerx.runner import Runner
from runnerx.runner.cli import add_common_args, build_runner

ROOT = Path(__file__).parents[2]


@METRICS.register_module()
class FastDevRunSampleCount(BaseMetric):
    """The samples evaluated (one result each) and the size ``evaluate`` was given."""

    default_prefix = "count"

    def process(self, data_batch, data_samples):
        self.results.extend(data_samples["gt_label"].tolist())

    def compute_metrics(self, results):
        return {"samples": len(results)}

    def evaluate(self, size):
        return {**super().evaluate(size), "count/size": size}


@HOOKS.register_module()
class FastDevRunCounter(Hook):
    """Counts the iterations of each mode and keeps the metrics of each validation."""

    def __init__(self):
        self.iters = {"train": 0, "val": 0, "test": 0}
        self.validations = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.iters["train"] += 1

    def after_val_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.iters["val"] += 1

    def after_test_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.iters["test"] += 1

    def after_val_epoch(self, runner, metrics=None):
        self.validations.append(dict(metrics))


def smoke_cfg(cfg: Config, batches, val_batch_size: int = 32) -> Config:
    """The digits config under fast_dev_run, counting iterations and evaluated samples."""
    cfg.fast_dev_run = batches
    cfg.custom_hooks = [dict(type="FastDevRunCounter")]
    for stage in ("val", "test"):
        cfg[f"{stage}_dataloader"] = {**cfg[f"{stage}_dataloader"], "batch_size": val_batch_size}
        cfg[f"{stage}_evaluator"] = dict(type="FastDevRunSampleCount")
    return cfg


def counter(runner) -> FastDevRunCounter:
    return next(hook for hook in runner.hooks if isinstance(hook, FastDevRunCounter))


def log_text(work_dir) -> str:
    (log_file,) = Path(work_dir).glob("*/*.log")
    return log_file.read_text()


def saved_checkpoints(work_dir) -> list:
    return sorted(Path(work_dir).rglob("*.pth")) + sorted(Path(work_dir).rglob("last_checkpoint"))


@pytest.mark.parametrize("batches", [True, 3])
def test_epoch_based_training_runs_n_iterations_and_one_validation_of_n_batches(
    digits_cfg, batches
):
    n = int(batches)
    cfg = smoke_cfg(digits_cfg, batches)
    cfg.train_cfg.val_begin = 5  # a whole run would not validate after epoch 1
    runner = Runner.from_cfg(cfg)
    runner.train()
    count = counter(runner)
    assert runner.iter == count.iters["train"] == n
    assert (runner.max_epochs, runner.max_iters, len(runner.train_dataloader)) == (1, n, n)
    assert count.iters["val"] == n and len(count.validations) == 1
    assert count.validations[0]["count/samples"] == count.validations[0]["count/size"] == n * 32
    assert saved_checkpoints(cfg.work_dir) == []
    text = log_text(cfg.work_dir)
    assert re.search(rf"Epoch\(train\) +\[1\]\[1/{n}\] +lr: ", text)  # logged at interval 1
    assert f"fast_dev_run={n}: train() runs {n} training iteration(s)" in text
    assert not re.search(r"\) CheckpointHook|\) PreemptionHook", text)  # not in the hook table
    assert list(Path(cfg.work_dir).glob("*/vis_data/scalars.json"))


def test_hooks_registered_after_the_runner_was_built_follow_the_same_rules(digits_cfg):
    runner = Runner.from_cfg(smoke_cfg(digits_cfg, 2))
    runner.register_hook(dict(type="CheckpointHook", interval=1))
    runner.register_hook(dict(type="LoggerHook", interval=50), priority="LOWEST")
    runner.train()
    assert saved_checkpoints(digits_cfg.work_dir) == []
    assert not any(type(hook).__name__ == "CheckpointHook" for hook in runner.hooks)
    assert [hook.interval for hook in runner.hooks if type(hook).__name__ == "LoggerHook"] == [1, 1]
    assert "fast_dev_run: CheckpointHook is left out" in log_text(digits_cfg.work_dir)


def test_the_work_dirs_config_is_left_to_the_real_runs(digits_cfg):
    work = Path(digits_cfg.work_dir)
    work.mkdir(parents=True)
    real = work / "digits_convnet.py"  # tools/test.py work_dirs/x/x.py ... reads it
    real.write_text("# the config of the real run\n")
    runner = Runner.from_cfg(smoke_cfg(digits_cfg, 1))
    assert real.read_text() == "# the config of the real run\n"
    assert Config.fromfile(Path(runner.log_dir, "vis_data", "config.py")).fast_dev_run == 1
    assert (
        f"fast_dev_run: {real} is not written (a smoke test leaves the work dir's config "
        f"alone); this run's config is in its log under {runner.log_dir}"
    ) in log_text(work)
    real.unlink()
    Runner.from_cfg(smoke_cfg(digits_cfg, 1))
    assert not real.exists()


@pytest.mark.parametrize(("max_iters", "iters"), [(30, 3), (2, 2)])
def test_iteration_based_training_runs_n_iterations_and_validates_once(
    digits_cfg, max_iters, iters
):
    cfg = smoke_cfg(digits_cfg, 3)
    cfg.train_cfg = dict(by_epoch=False, max_iters=max_iters, val_interval=1)  # every iter
    cfg.train_dataloader.sampler = dict(type="InfiniteSampler", shuffle=True)
    cfg.param_scheduler = [dict(type="LinearLR", start_factor=0.5, by_epoch=False, end=10)]
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=1)
    cfg.log_processor = dict(by_epoch=False)
    runner = Runner.from_cfg(cfg)
    runner.train()
    count = counter(runner)
    assert runner.iter == count.iters["train"] == runner.max_iters == iters
    assert count.iters["val"] == 3 and len(count.validations) == 1
    assert count.validations[0]["count/samples"] == 3 * 32
    assert saved_checkpoints(cfg.work_dir) == []
    assert re.search(rf"Iter\(train\) +\[1/{iters}\] +lr: ", log_text(cfg.work_dir))


def test_val_and_test_evaluate_n_batches_and_load_from_loads_weights(digits_cfg, tmp_path):
    # a checkpoint from a short normal run
    cfg = Config(digits_cfg.to_dict())
    cfg.work_dir = str(tmp_path / "normal")
    cfg.train_cfg = dict(by_epoch=False, max_iters=2, val_interval=10)
    cfg.param_scheduler = []
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=2)
    Runner.from_cfg(cfg).train()
    checkpoint = tmp_path / "normal" / "iter_2.pth"

    cfg = smoke_cfg(digits_cfg, 2, val_batch_size=16)
    cfg.load_from = str(checkpoint)
    runner = Runner.from_cfg(cfg)
    tested = runner.test()
    validated = runner.val()
    assert tested == validated == {"count/samples": 32, "count/size": 32}
    assert counter(runner).iters == {"train": 0, "val": 2, "test": 2}
    assert f"loaded weights from {checkpoint}" in log_text(cfg.work_dir)


def test_fast_dev_run_covering_the_whole_dataset_evaluates_each_sample_once(digits_cfg):
    cfg = smoke_cfg(digits_cfg, 5, val_batch_size=128)  # 359 samples: 3 batches
    metrics = Runner.from_cfg(cfg).val()
    assert metrics == {"count/samples": 359, "count/size": 359}


@pytest.mark.parametrize("value", [0, -1, 1.5, "2", [1]])
def test_a_bad_value_is_an_error_naming_the_key(digits_cfg, value):
    digits_cfg.fast_dev_run = value
    with pytest.raises(ValueError, match=r"fast_dev_run must be False .* positive int"):
        Runner.from_cfg(digits_cfg)


def test_resume_is_refused_and_off_values_change_nothing(digits_cfg):
    digits_cfg.fast_dev_run = 2
    digits_cfg.resume = True
    with pytest.raises(ValueError, match=r"fast_dev_run=2 cannot be combined with resume.*"):
        Runner.from_cfg(digits_cfg)
    for off in (False, None):
        digits_cfg.merge_from_dict(dict(fast_dev_run=off, resume=False))
        runner = Runner.from_cfg(digits_cfg)
        assert runner.max_iters == 8 * 23 and runner.fast_dev_run == 0
        assert any(type(hook).__name__ == "CheckpointHook" for hook in runner.hooks)


def test_the_flag_is_shared_by_the_tools():
    parser = argparse.ArgumentParser()
    add_common_args(parser)
    assert parser.parse_args([]).fast_dev_run is None
    assert parser.parse_args(["--fast-dev-run"]).fast_dev_run == 1
    assert parser.parse_args(["--fast-dev-run", "4"]).fast_dev_run == 4


@LOOPS.register_module()
class FastDevRunUnawareValLoop:
    """A user's own validation loop that knows nothing of fast_dev_run."""

    def __init__(self, runner, dataloader, evaluator):
        self.runner = runner
        self.dataloader = runner.build_dataloader(dataloader)
        self.batches = 0

    def run(self):
        for _ in self.dataloader:
            self.batches += 1
        return {}


def test_a_loop_without_the_limit_runs_in_full_with_a_warning(digits_cfg):
    cfg = smoke_cfg(digits_cfg, 1)
    cfg.val_cfg = dict(type="FastDevRunUnawareValLoop")
    runner = Runner.from_cfg(cfg)
    runner.val()
    assert runner.val_loop.batches == 12  # 359 samples in batches of 32
    assert "FastDevRunUnawareValLoop has no apply_fast_dev_run" in log_text(cfg.work_dir)


def test_flexible_runner_takes_the_key(digits_cfg):
    cfg = smoke_cfg(digits_cfg, 2)
    cfg.runner_type = "FlexibleRunner"
    runner = build_runner(cfg)
    runner.train()
    assert runner.iter == counter(runner).iters["train"] == 2
    assert saved_checkpoints(cfg.work_dir) == []


def test_tools_train_and_test_with_fast_dev_run(tmp_path, run_in_repo, digits_cfg):
    def run_tool(*args):
        result = run_in_repo([sys.executable, *args])
        assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"

    work = tmp_path / "train"
    run_tool(
        "tools/train.py",
        "configs/digits_convnet.py",
        "--work-dir",
        str(work),
        "--fast-dev-run",
        "2",
    )
    text = log_text(work)
    assert len(re.findall(r"Epoch\(train\) +\[1\]\[\d/2\] +lr: ", text)) == 2
    assert "Epoch(val) [1][2/2]" in text and "accuracy/top1:" in text
    assert saved_checkpoints(work) == []

    # tools/test.py on a checkpoint of a normal run (a few iterations, in this process)
    digits_cfg.train_cfg = dict(by_epoch=False, max_iters=1, val_interval=10)
    digits_cfg.param_scheduler = []
    digits_cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=1)
    Runner.from_cfg(digits_cfg).train()
    checkpoint = os.path.join(digits_cfg.work_dir, "iter_1.pth")
    test_work = tmp_path / "test"
    options = ["--cfg-options", "test_dataloader.batch_size=32"]
    run_tool(
        "tools/test.py", "configs/digits_convnet.py", checkpoint, "--work-dir", str(test_work),
        "--fast-dev-run", *options,
    )  # fmt: skip
    text = log_text(test_work)
    assert re.findall(r"Epoch\(test\) +\[\d+/\d+\]", text) == ["Epoch(test) [1/1]"] * 2
    assert f"loaded weights from {checkpoint}" in text


def run_rank(rank, out_dir):
    import torch

    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    outcome = {}
    for name, val_batch_size in (("part", 32), ("whole", 128)):
        cfg = smoke_cfg(Config.fromfile(ROOT / "configs/digits_convnet.py"), 2, val_batch_size)
        cfg.work_dir = os.path.join(out_dir, name)
        cfg.launcher = "pytorch"
        runner = Runner.from_cfg(cfg)
        runner.train()
        outcome[name] = (runner.iter, counter(runner).iters, counter(runner).validations)
    return outcome


def test_two_ranks_evaluate_n_batches_each_and_no_padding(tmp_path, spawn_ranks):
    outcomes = spawn_ranks(run_rank, tmp_path, 2, timeout=120)
    for outcome in outcomes:
        # 2 batches of 32 on each rank: the first 128 samples
        assert outcome["part"] == (
            2,
            {"train": 2, "val": 2, "test": 0},
            [{"count/samples": 128, "count/size": 128}],
        )
        # 2 batches of 128 hold a rank's whole share (180); rank 1's is padded by one sample
        assert outcome["whole"][2] == [{"count/samples": 359, "count/size": 359}]
    assert not list(tmp_path.rglob("*.pth"))
