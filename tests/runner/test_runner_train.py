"""End to end: the Runner trains, validates, tests, logs and checkpoints from configs."""

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from runnerx import HOOKS, MODELS, RUNNERS, Config
from runnerx.hooks import HOOK_POINTS, Hook
from runnerx.model import BaseModel
from runnerx.runner import Runner
from runnerx.runner.cli import build_runner, checkpoint_to_test
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]


@pytest.fixture
def run_tool(run_in_repo):
    """``run_tool(*args)``: run ``python tools/...`` as a user would; fail with its output on
    error."""

    def run(*args: str) -> subprocess.CompletedProcess:
        result = run_in_repo([sys.executable, *args])
        assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        return result

    return run


def scalars(work_dir: Path) -> list[dict]:
    (log_dir,) = [p for p in work_dir.iterdir() if p.is_dir()]
    lines = (log_dir / "vis_data" / "scalars.json").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_tools_train_writes_the_work_dir_layout(tmp_path, run_tool):
    work = tmp_path / "work"
    result = run_tool("tools/train.py", "configs/digits_convnet.py", "--work-dir", str(work))
    accuracies = [row["accuracy/top1"] for row in scalars(work) if "accuracy/top1" in row]
    assert len(accuracies) == 8  # validated after every epoch
    (log_dir,) = [p for p in work.iterdir() if p.is_dir()]
    log_text = (log_dir / f"{log_dir.name}.log").read_text()
    assert re.search(
        r"Epoch\(train\) +\[1\]\[10/23\] +lr: \S+ +eta: \S+ +time: \S+ +data_time", log_text
    )
    assert "Epoch(val) [8][" in log_text and "accuracy/top1:" in log_text
    assert "\x1b[" not in log_text  # no colour codes in the file
    dumped = Config.fromfile(work / "digits_convnet.py")  # where MMEngine writes it
    assert dumped.train_cfg.max_epochs == 8 and dumped.work_dir == str(work)
    assert Config.fromfile(log_dir / "vis_data" / "config.py").to_dict() == dumped.to_dict()
    # MMEngine's JSON log: the lines LoggerHook sent, the same as scalars.json's
    json_log = (log_dir / "vis_data" / f"{log_dir.name}.json").read_text().splitlines()
    assert [json.loads(line) for line in json_log] == scalars(work)
    checkpoints = sorted(p.name for p in work.glob("*.pth"))
    assert checkpoints == ["epoch_7.pth", "epoch_8.pth"]  # max_keep_ckpts=2
    assert (work / "last_checkpoint").read_text().strip().endswith("epoch_8.pth")
    assert "loss" in result.stderr + result.stdout + log_text


def test_tools_test_evaluates_a_checkpoint(tmp_path, run_tool):
    work = tmp_path / "work"
    run_tool(
        "tools/train.py",
        "configs/digits_convnet.py",
        "--work-dir",
        str(work),
        "--cfg-options",
        "train_cfg.max_epochs=2",
    )
    run_tool(
        "tools/test.py",
        "configs/digits_convnet.py",
        str(work / "epoch_2.pth"),
        "--work-dir",
        str(tmp_path / "test"),
    )
    (log_dir,) = [path for path in (tmp_path / "test").iterdir() if path.is_dir()]
    tested = json.loads((log_dir / f"{log_dir.name}.json").read_text())
    trained = [row for row in scalars(work) if "accuracy/top1" in row][-1]["accuracy/top1"]
    assert tested["accuracy/top1"] == pytest.approx(trained)


@HOOKS.register_module()
class RecordingHook(Hook):
    """Records every point it is called at (registered as an MMEngine user would)."""

    calls: list = []

    def __init__(self):
        RecordingHook.calls = []

    def _record(self, name):
        RecordingHook.calls.append(name)


for _point in HOOK_POINTS:
    if "test" in _point or _point == "after_load_checkpoint":
        continue
    setattr(RecordingHook, _point, (lambda name: lambda self, *a, **k: self._record(name))(_point))


def small_digits(cfg, epochs=2):
    cfg.merge_from_dict({"train_cfg.max_epochs": epochs, "param_scheduler.1.end": epochs})
    return cfg


def test_hook_points_are_called_in_mmengine_order(digits_cfg):
    cfg = small_digits(digits_cfg, epochs=1)
    cfg.custom_hooks = [dict(type="RecordingHook")]
    Runner.from_cfg(cfg).train()
    calls = RecordingHook.calls
    iters = 23
    expected = (
        ["before_run", "before_train", "before_train_epoch"]
        + ["before_train_iter", "after_train_iter"] * iters
        + ["before_save_checkpoint", "after_train_epoch"]
        + ["before_val", "before_val_epoch"]
        + ["before_val_iter", "after_val_iter"] * 2
        + ["after_val_epoch", "after_val", "after_train", "after_run"]
    )
    assert _without_checkpoint(calls) == _without_checkpoint(expected)
    assert "before_save_checkpoint" in calls


def _without_checkpoint(calls):
    return [call for call in calls if call != "before_save_checkpoint"]


def test_hooks_only_called_where_they_act(digits_cfg):
    runner = Runner.from_cfg(small_digits(digits_cfg, 1))
    for point in ("before_train_iter", "after_train_iter", "after_val_iter"):
        for method in runner.hook_methods(point):
            assert getattr(type(method.__self__), point) is not getattr(Hook, point)
    names = [type(m.__self__).__name__ for m in runner.hook_methods("after_train_iter")]
    assert "DistSamplerSeedHook" not in names and "ParamSchedulerHook" in names


def test_the_loop_leaves_out_hooks_that_settle_in_before_train_to_do_nothing(digits_cfg):
    cfg = small_digits(digits_cfg, 2)
    cfg.param_scheduler = [dict(type="MultiStepLR", by_epoch=True, milestones=[1])]
    runner = Runner.from_cfg(cfg)
    assert "ParamSchedulerHook" in after_train_iter_hooks(runner)  # asked before training
    lr = cfg.optim_wrapper.optimizer.lr
    runner.train()
    # no scheduler steps by iteration: not called per iteration, yet the epoch one stepped
    assert "ParamSchedulerHook" not in after_train_iter_hooks(runner)
    assert runner.optim_wrapper.param_groups[0]["lr"] == pytest.approx(lr * 0.1)


def after_train_iter_hooks(runner):
    return [type(method.__self__).__name__ for method in runner.hook_methods("after_train_iter")]


def test_model_train_mode_is_set_once_per_epoch_not_per_iteration(digits_cfg, monkeypatch):
    runner = Runner.from_cfg(small_digits(digits_cfg, 2))
    calls = []
    original = torch.nn.Module.train

    def counting_train(module, mode=True):
        if module is runner.unwrapped_model:
            calls.append(mode)
        return original(module, mode)

    monkeypatch.setattr(torch.nn.Module, "train", counting_train)
    runner.train()
    # per epoch: train() at its start, eval() for validation (and train() after it)
    assert len(calls) <= 6, calls


def test_same_seed_same_weights(tmp_path):
    weights = []
    for run in range(2):
        cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
        cfg.work_dir = str(tmp_path / f"w{run}")
        small_digits(cfg, 1)
        runner = Runner.from_cfg(cfg)
        runner.train()
        weights.append({k: v.clone() for k, v in runner.unwrapped_model.state_dict().items()})
    for key in weights[0]:
        assert torch.equal(weights[0][key], weights[1][key]), key


def test_two_runs_with_one_experiment_name_share_no_state(tmp_path):
    # Two runs of one config started within the same second get the same default experiment
    # name: the second must not inherit the first's kept checkpoints (max_keep_ckpts=2 would
    # then delete its own new epoch_1.pth) nor its logged scalars.
    runners = []
    for run, epochs in (("first", 2), ("second", 1)):
        cfg = small_digits(Config.fromfile(ROOT / "configs/digits_convnet.py"), epochs)
        cfg.work_dir = str(tmp_path / run)
        cfg.experiment_name = "same_name"
        runners.append(Runner.from_cfg(cfg))
        runners[-1].train()
    first, second = runners
    assert sorted(p.name for p in Path(second.work_dir).glob("*.pth")) == ["epoch_1.pth"]
    assert second.message_hub is not first.message_hub
    iters = len(second.train_dataloader)
    assert second.message_hub.get_scalar("train/loss").count == iters
    assert first.message_hub.get_scalar("train/loss").count == 2 * iters


def test_runs_started_in_one_second_in_one_work_dir_log_apart(digits_cfg, monkeypatch):
    # the clock stands still: every run starts "in the same second"
    localtime = time.localtime
    monkeypatch.setattr(time, "localtime", lambda *secs: localtime(*(secs or (0,))))
    runners = []
    for epochs in (1, 2):
        runners.append(Runner.from_cfg(small_digits(digits_cfg, epochs)))
        runners[-1].train()
    stamp = time.strftime("%Y%m%d_%H%M%S", time.localtime(0))
    assert [r.timestamp for r in runners] == [stamp, f"{stamp}_1"]
    assert runners[0].experiment_name != runners[1].experiment_name
    for runner, epochs in zip(runners, (1, 2)):
        log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
        assert log.count("Exp name:") == epochs  # its own lines only
        scalars = Path(runner.log_dir, "vis_data", "scalars.json").read_text().splitlines()
        assert len(scalars) == 3 * epochs  # per epoch: 2 training lines (of 23), 1 val line


def test_runners_built_before_either_trains_keep_their_logs_and_state_apart(tmp_path):
    runners = []
    for run in ("first", "second"):
        cfg = small_digits(Config.fromfile(ROOT / "configs/digits_convnet.py"), epochs=1)
        cfg.work_dir = str(tmp_path / run)
        cfg.optim_wrapper.clip_grad = dict(max_norm=100.0)  # grad_norm: to the current hub
        cfg.param_scheduler[1].verbose = True  # logged by runnerx's own module logger
        runners.append(Runner.from_cfg(cfg))
    for runner in runners:  # the first trains after the second was built
        runner.train()
    for runner in runners:
        log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
        assert log.count("Exp name:") == 1  # its own training lines, none of the other's
        assert log.count("Adjusting parameter value of group 0") == 1
        iters = len(runner.train_dataloader)
        assert runner.message_hub.get_scalar("train/grad_norm").count == iters


@RUNNERS.register_module()
class RunnerWithAnOption(Runner):
    """A runner_type subclass with an argument of its own."""

    def __init__(self, *args, shout: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.shout = shout


def test_runner_type_builds_the_subclass_with_its_own_config_keys(digits_cfg):
    digits_cfg.runner_type = "RunnerWithAnOption"
    digits_cfg.shout = True
    runner = build_runner(digits_cfg)
    assert type(runner) is RunnerWithAnOption and runner.shout is True
    assert runner.cfg.shout is True and runner.cfg is not digits_cfg  # its own copy
    assert runner.experiment_name.startswith("digits_convnet_")
    del digits_cfg.shout
    assert RunnerWithAnOption.from_cfg(digits_cfg).shout is False  # the default
    digits_cfg.runner_type = "RunnerThatIsNot"
    with pytest.raises(KeyError, match="'RunnerThatIsNot' is not a registered runner"):
        build_runner(digits_cfg)


def test_from_cfg_names_a_missing_required_key(digits_cfg):
    del digits_cfg.work_dir
    with pytest.raises(KeyError, match="no work_dir: Runner needs it .* pass --work-dir"):
        Runner.from_cfg(digits_cfg)


def test_build_dataloader_is_static_as_in_mmengine_and_loops_pass_the_seed(digits_cfg):
    loader = Runner.build_dataloader(digits_cfg.train_dataloader)  # as scripts call it
    assert len(loader) == 23 and loader.generator is None
    runner = Runner.from_cfg(digits_cfg)
    # what an MMEngine loop's __init__ calls
    seeded = runner.build_dataloader(
        digits_cfg.train_dataloader,
        seed=runner.seed,
        diff_rank_seed=runner._randomness_cfg.get("diff_rank_seed", False),
    )
    assert seeded.sampler.seed == runner.seed == runner.train_dataloader.sampler.seed


def test_iteration_based_loop_counts_and_validates(digits_cfg):
    cfg = digits_cfg
    cfg.train_cfg = dict(by_epoch=False, max_iters=30, val_interval=12)
    cfg.param_scheduler = [dict(type="LinearLR", start_factor=0.5, by_epoch=False, end=10)]
    cfg.train_dataloader.sampler = dict(type="InfiniteSampler", shuffle=True)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=15)
    cfg.log_processor = dict(by_epoch=False)
    cfg.custom_hooks = [dict(type="RecordingHook")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 30
    assert RecordingHook.calls.count("after_train_iter") == 30
    assert RecordingHook.calls.count("after_val") == 3  # at 12, 24 and the end (30)
    assert sorted(p.name for p in Path(cfg.work_dir).glob("*.pth")) == [
        "iter_15.pth",
        "iter_30.pth",
    ]


@MODELS.register_module()
class MMEngineStyleNet(BaseModel):
    """Written as for MMEngine: BaseModel subclass, forward(inputs, data_samples, mode)."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear = torch.nn.Linear(64, 10)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.linear(inputs.flatten(1))
        if mode == "loss":
            return {"loss": torch.nn.functional.cross_entropy(logits, data_samples)}
        if mode == "predict":
            return [
                dict(pred_score=s, gt_label=g) for s, g in zip(logits.softmax(-1), data_samples)
            ]
        return logits


def test_mmengine_style_model_runs(digits_cfg):
    cfg = small_digits(digits_cfg, 2)
    cfg.model = dict(type="MMEngineStyleNet")
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 46
    assert "accuracy/top1" in scalars(Path(cfg.work_dir))[-1]


@MODELS.register_module()
class LossNotDictNet(MMEngineStyleNet):
    def forward(self, inputs, data_samples=None, mode="tensor"):
        if mode == "loss":
            return torch.tensor(1.0, requires_grad=True)
        return super().forward(inputs, data_samples, mode)


def test_loss_mode_not_returning_a_dict_is_explained(digits_cfg):
    cfg = small_digits(digits_cfg, 1)
    cfg.model = dict(type="LossNotDictNet")
    with pytest.raises(TypeError, match="dict"):
        Runner.from_cfg(cfg).train()


def test_resume_at_epoch_boundary_gives_the_same_weights(tmp_path):
    def run(work, epochs, resume=False):
        cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
        cfg.work_dir = str(work)
        cfg.merge_from_dict({"train_cfg.max_epochs": epochs, "param_scheduler.1.end": 4})
        cfg.resume = resume
        runner = Runner.from_cfg(cfg)
        runner.train()
        return runner

    straight = run(tmp_path / "a", 4)
    run(tmp_path / "b", 2)
    resumed = run(tmp_path / "b", 4, resume=True)
    assert resumed.iter == straight.iter == 92
    for key, value in straight.unwrapped_model.state_dict().items():
        assert torch.equal(value, resumed.unwrapped_model.state_dict()[key]), key


def test_missing_parts_are_reported_together(digits_cfg):
    cfg = digits_cfg
    cfg.val_evaluator = None
    with pytest.raises(ValueError, match="val_dataloader, val_cfg given but val_evaluator missing"):
        Runner.from_cfg(cfg)


def test_char_transformer_example_reports_perplexity(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/char_transformer.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.merge_from_dict(
        {
            "train_cfg.max_iters": 20,
            "train_cfg.val_interval": 20,
            "param_scheduler.0.end": 5,
            "param_scheduler.1.begin": 5,
            "param_scheduler.1.end": 20,
            "model.n_layer": 1,
            "model.n_embd": 32,
            "model.block_size": 32,
            "train_dataloader.dataset.block_size": 32,
            "val_dataloader.dataset.block_size": 32,
            "train_dataloader.dataset.max_chars": 50_000,
            "val_dataloader.dataset.max_chars": 50_000,
            "default_hooks.logger.interval": 10,
            "default_hooks.checkpoint.interval": 20,
        }
    )
    runner = Runner.from_cfg(cfg)
    runner.train()
    row = [r for r in scalars(Path(cfg.work_dir)) if "lm/perplexity" in r][-1]
    assert 1.0 < row["lm/perplexity"] < 256.0


def test_auto_scale_lr_follows_the_total_batch_size(digits_cfg):
    cfg = small_digits(digits_cfg, 1)
    cfg.merge_from_dict({"auto_scale_lr.enable": True, "train_dataloader.batch_size": 32})
    cfg.param_scheduler = None
    runner = Runner.from_cfg(cfg)
    runner.train()
    # base_batch_size 64, real total 32 x 1 process: lr 0.1 -> 0.05
    assert runner.optim_wrapper.param_groups[0]["lr"] == pytest.approx(0.05)


def test_auto_scale_lr_reads_the_batch_size_of_a_batch_sampler(digits_cfg):
    from torch.utils.data import BatchSampler

    from runnerx.registry import DATA_SAMPLERS

    if "BatchSamplerForTests" not in DATA_SAMPLERS:
        DATA_SAMPLERS.register_module("BatchSamplerForTests", module=BatchSampler)
    cfg = small_digits(digits_cfg, 1)
    cfg.auto_scale_lr.enable = True
    cfg.train_dataloader.batch_size = 16  # the batch sampler's, as MMEngine passes it
    cfg.train_dataloader.batch_sampler = dict(type="BatchSamplerForTests", drop_last=False)
    cfg.param_scheduler = None
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.train_dataloader.batch_size is None  # the batches are the batch sampler's
    assert runner.optim_wrapper.param_groups[0]["lr"] == pytest.approx(0.1 * 16 / 64)


@pytest.mark.parametrize(
    ("train_cfg", "sampler_type"),
    [
        (dict(by_epoch=True, max_epochs=1), "DefaultSampler"),
        (dict(by_epoch=False, max_iters=5, val_interval=5), "InfiniteSampler"),
    ],
)
def test_sampler_none_takes_the_loops_sampler_as_mmengines_docs_say(
    digits_cfg, train_cfg, sampler_type
):
    # MMEngine's epoch_to_iter.md: set the sampler to None and the train loop picks one
    digits_cfg.train_cfg = train_cfg
    digits_cfg.param_scheduler = None
    digits_cfg.train_dataloader.sampler = None
    digits_cfg.val_dataloader.sampler = None
    runner = Runner.from_cfg(digits_cfg)
    sampler = runner.train_dataloader.sampler
    assert type(sampler).__name__ == sampler_type and sampler.shuffle is True
    val_sampler = runner.val_dataloader.sampler
    assert type(val_sampler).__name__ == "DefaultSampler" and val_sampler.shuffle is False
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "train_dataloader.sampler is None: using" in log


def test_hooks_get_keyword_arguments_and_custom_points_as_in_mmengine(digits_cfg):
    # MMEngine calls hook methods with keywords, and any method a custom loop's point names
    calls = []

    class KwargsHook(Hook):
        def after_train_iter(self, runner, **kwargs):
            calls.append(sorted(kwargs))

        def after_my_point(self, runner, **kwargs):
            calls.append(("my_point", kwargs))

    runner = Runner.from_cfg(small_digits(digits_cfg, epochs=1))
    runner.register_hook(KwargsHook())
    runner.train()
    assert calls[0] == ["batch_idx", "data_batch", "outputs"]
    runner.call_hook("after_my_point", value=3)
    assert calls[-1] == ("my_point", {"value": 3})


def test_a_hook_overriding_mmengines_mode_generic_points_acts_in_every_mode(digits_cfg):
    # MMEngine's EmptyCacheHook style: _after_iter(..., mode) stands for the three modes
    seen = []

    class GenericHook(Hook):
        def _after_iter(self, runner, batch_idx, data_batch=None, outputs=None, mode="train"):
            seen.append(mode)

        def _before_epoch(self, runner, mode="train"):
            seen.append(f"epoch:{mode}")

    hook = GenericHook()
    assert "after_val_iter" in hook.get_triggered_stages()
    assert hook.stages[0] == "before_run"
    runner = Runner.from_cfg(small_digits(digits_cfg, epochs=1))
    runner.register_hook(hook)
    runner.train()
    assert {"train", "val", "epoch:train", "epoch:val"} <= set(seen)


def test_loops_hand_the_dataset_metainfo_to_the_visualizer_and_evaluator(digits_cfg):
    from runnerx.runner import Runner

    runner = Runner.from_cfg(digits_cfg)
    assert runner.visualizer.dataset_meta is None
    runner.val_loop  # noqa: B018 (built on first use, as in MMEngine)
    classes = tuple("0123456789")
    assert runner.visualizer.dataset_meta == {"classes": classes}
    assert runner.val_loop.evaluator.dataset_meta == {"classes": classes}
    runner.visualizer.dataset_meta = None
    runner.train_loop  # noqa: B018
    assert runner.visualizer.dataset_meta == {"classes": classes}


def trained_saving_best(work_dir: Path, epochs: int, **checkpoint) -> tuple[Config, Runner]:
    """The digits example trained for ``epochs``, its CheckpointHook keeping the best top-1."""
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    cfg.merge_from_dict({"train_cfg.max_epochs": epochs, "param_scheduler.1.end": epochs})
    cfg.default_hooks.checkpoint.update(save_best="accuracy/top1", **checkpoint)
    runner = Runner.from_cfg(cfg)
    runner.train()
    return cfg, runner


def test_tools_test_takes_last_and_best_from_the_work_dir(tmp_path):
    # rule='less': the worst epoch, not the last one
    cfg, runner = trained_saving_best(tmp_path / "work", 3, rule="less")
    accuracies = [
        row["accuracy/top1"] for row in scalars(Path(cfg.work_dir))[::-1] if "accuracy/top1" in row
    ]
    best_file = runner.message_hub.get_info("best_ckpt")
    assert Path(best_file).name.startswith("best_accuracy_top1_epoch_")
    assert checkpoint_to_test("best", cfg.work_dir) == best_file
    test_tool = load_tool("test")
    options = ["--work-dir", cfg.work_dir]
    last = test_tool.main([str(ROOT / "configs/digits_convnet.py"), "last", *options])
    best = test_tool.main([str(ROOT / "configs/digits_convnet.py"), "best", *options])
    assert last["accuracy/top1"] == pytest.approx(accuracies[0])  # the last epoch's
    assert best["accuracy/top1"] == pytest.approx(min(accuracies)) != accuracies[0]


def test_best_is_found_beside_the_last_checkpoint_in_a_local_out_dir(tmp_path):
    cfg, runner = trained_saving_best(tmp_path / "work", 2, out_dir=str(tmp_path / "out"))
    best_file = runner.message_hub.get_info("best_ckpt")
    assert Path(best_file).parent == tmp_path / "out" / "work"  # not in the work dir
    assert checkpoint_to_test("best", cfg.work_dir) == best_file


def test_best_is_not_confused_by_the_published_copy_of_the_best(tmp_path):
    cfg, runner = trained_saving_best(tmp_path / "work", 2, published_keys=["meta", "state_dict"])
    best_file = runner.message_hub.get_info("best_ckpt")
    published = sorted(Path(cfg.work_dir).glob("best_*-*.pth"))
    assert [path.name.rsplit("-", 1)[0] for path in published] == [Path(best_file).stem]
    assert checkpoint_to_test("best", cfg.work_dir) == best_file


def test_last_and_best_say_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"'last': .* has no last_checkpoint file"):
        checkpoint_to_test("last", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"'best': one best_\*.pth .* found none"):
        checkpoint_to_test("best", str(tmp_path / "missing"))
    for name in ("best_acc_epoch_2.pth", "best_loss_epoch_1.pth", "best_acc_epoch_3.pth.partial"):
        (tmp_path / name).touch()
    several = rf"several: {tmp_path}/best_acc_epoch_2.pth, {tmp_path}/best_loss_epoch_1.pth; "
    with pytest.raises(FileNotFoundError, match=several):
        checkpoint_to_test("best", str(tmp_path))
    (tmp_path / "best").touch()  # a file of that name is taken as it is
    assert checkpoint_to_test("best", str(tmp_path)) == "best"
    assert checkpoint_to_test("s3://bucket/epoch_3.pth", str(tmp_path)) == "s3://bucket/epoch_3.pth"
