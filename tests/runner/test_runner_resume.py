"""Exact resume: a run interrupted anywhere, mid-epoch included, and resumed ends with
parameters bit-for-bit equal to the run that was never interrupted."""

from pathlib import Path

import pytest
import torch

from runnerx import HOOKS, Config
from runnerx.checkpoint import load_checkpoint, save_checkpoint
from runnerx.hooks import Hook
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


class Interrupted(Exception):
    """Stands for the process being killed."""


@HOOKS.register_module()
class InterruptAtIter(Hook):
    """Raises after iteration ``at`` (1-based) has finished and its hooks have run."""

    priority = "LOWEST"

    def __init__(self, at: int):
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            raise Interrupted(f"stopped after iteration {self.at}")


def digits_cfg(work_dir: Path, **changes) -> Config:
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    cfg.merge_from_dict({"train_cfg.max_epochs": 2, "param_scheduler.1.end": 2})
    # save every 5 iterations, so an interruption falls mid-epoch (an epoch is 23 iterations)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=5)
    cfg.merge_from_dict(changes)
    return cfg


def final_state(cfg: Config) -> dict:
    runner = Runner.from_cfg(cfg)
    runner.train()
    return {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}


def interrupted_then_resumed(cfg: Config, at: int) -> dict:
    first = cfg.copy()
    first.custom_hooks = [*cfg.get("custom_hooks", []), dict(type="InterruptAtIter", at=at)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    second = cfg.copy()
    second.resume = True  # the newest checkpoint of the work dir, as --resume does
    return final_state(second)


def assert_same(expected: dict, actual: dict) -> None:
    assert expected.keys() == actual.keys()
    for key, value in expected.items():
        assert torch.equal(value, actual[key]), f"{key} differs after resuming"


@pytest.mark.parametrize("num_workers", [0, 2])
def test_epoch_based_resume_mid_epoch_is_exact(tmp_path, num_workers):
    changes = {
        "train_dataloader.num_workers": num_workers,
        "train_dataloader.persistent_workers": num_workers > 0,
    }
    expected = final_state(digits_cfg(tmp_path / "straight", **changes))
    # interrupted at 33: the newest checkpoint is iteration 30, 7 batches into epoch 2
    resumed = interrupted_then_resumed(digits_cfg(tmp_path / "resumed", **changes), at=33)
    assert_same(expected, resumed)


def test_a_run_without_a_seed_resumes_with_the_seed_it_drew(tmp_path):
    """randomness.seed=None draws a seed per run; the resumed run draws another, but goes on
    with the interrupted run's (its data order included), so it ends as an unbroken run with
    that seed does."""
    cfg = digits_cfg(tmp_path / "resumed", **{"randomness.seed": None})
    first = cfg.copy()
    first.custom_hooks = [dict(type="InterruptAtIter", at=33)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    drawn = torch.load(Path(cfg.work_dir) / "iter_30.pth", weights_only=True)["meta"]["seed"]
    second = cfg.copy()
    second.resume = True
    runner = Runner.from_cfg(second)
    assert runner.seed != drawn  # (a 1 in 2**31 chance of a false failure)
    runner.train()
    assert runner.seed == drawn
    resumed = {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}
    expected = final_state(digits_cfg(tmp_path / "straight", **{"randomness.seed": drawn}))
    assert_same(expected, resumed)


def test_a_configured_seed_unlike_the_checkpoints_is_named_and_the_checkpoints_kept(tmp_path):
    cfg = digits_cfg(tmp_path / "run")  # seed 0
    first = cfg.copy()
    first.custom_hooks = [dict(type="InterruptAtIter", at=33)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    second = cfg.copy()
    second.merge_from_dict({"randomness.seed": 5, "resume": True})
    runner = Runner.from_cfg(second)
    runner.train()
    assert runner.seed == 0
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "randomness.seed is 5 but the checkpoint was trained with seed 0" in log


def test_a_change_in_data_order_would_be_caught(tmp_path):
    """The comparison above can fail: resuming at the wrong batch gives other weights."""
    expected = final_state(digits_cfg(tmp_path / "straight"))
    cfg = digits_cfg(tmp_path / "shifted")
    first = cfg.copy()
    first.custom_hooks = [dict(type="InterruptAtIter", at=33)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    checkpoint_path = Path(cfg.work_dir) / "iter_30.pth"
    checkpoint = torch.load(checkpoint_path, weights_only=True)
    checkpoint["dataloader"]["batches"] -= 1  # as if the loop restarted one batch too early
    torch.save(checkpoint, checkpoint_path)
    second = cfg.copy()
    second.resume = str(checkpoint_path)
    resumed = final_state(second)
    assert any(not torch.equal(expected[key], resumed[key]) for key in expected)


def test_iteration_based_resume_is_exact(tmp_path):
    changes = {
        "train_cfg": dict(_delete_=True, by_epoch=False, max_iters=60, val_interval=25),
        "train_dataloader.sampler": dict(type="InfiniteSampler", shuffle=True),
        "param_scheduler": [dict(type="LinearLR", start_factor=0.1, by_epoch=False, end=40)],
        "log_processor.by_epoch": False,
    }
    expected = final_state(digits_cfg(tmp_path / "straight", **changes))
    resumed = interrupted_then_resumed(digits_cfg(tmp_path / "resumed", **changes), at=38)
    assert_same(expected, resumed)


def test_iteration_based_passes_keep_epoch_at_zero_and_resume_in_a_later_pass_exactly(tmp_path):
    # DefaultSampler: each pass over the 23 batches reshuffles (sampler epoch 1, 2, ...), while
    # the loop's epoch stays 0 as in MMEngine (epoch-based hooks and log lines see one epoch)
    changes = {
        "train_cfg": dict(_delete_=True, by_epoch=False, max_iters=60, val_interval=100),
        "param_scheduler": None,
        "log_processor.by_epoch": False,
    }
    straight = Runner.from_cfg(digits_cfg(tmp_path / "straight", **changes))
    straight.train()
    assert straight.epoch == 0 and straight.train_dataloader.sampler.epoch == 2
    expected = {key: value.clone() for key, value in straight.unwrapped_model.state_dict().items()}
    resumed = interrupted_then_resumed(digits_cfg(tmp_path / "resumed", **changes), at=53)
    assert_same(expected, resumed)  # the checkpoint at iteration 50 is in the third pass


def test_resume_with_amp_and_ema_is_exact(tmp_path):
    changes = {
        "optim_wrapper.type": "AmpOptimWrapper",
        "optim_wrapper.dtype": "float16",
        "optim_wrapper.loss_scale": "dynamic",
        "custom_hooks": [dict(type="EMAHook", momentum=0.01)],
    }
    expected = final_state(digits_cfg(tmp_path / "straight", **changes))
    resumed = interrupted_then_resumed(digits_cfg(tmp_path / "resumed", **changes), at=42)
    assert_same(expected, resumed)


def test_checkpoint_records_rng_and_data_position(tmp_path):
    cfg = digits_cfg(tmp_path / "run")
    cfg.custom_hooks = [dict(type="InterruptAtIter", at=31)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(cfg).train()
    checkpoint = torch.load(Path(cfg.work_dir) / "iter_30.pth", weights_only=True)
    assert checkpoint["meta"]["iter"] == 30 and checkpoint["meta"]["epoch"] == 1
    position = {"epoch": 1, "batches": 7, "consumed": 7 * 64, "seed": 0}  # the config's seed
    # what a resume compares
    read_with = {"batch_size": 64, "world_size": 1, "dataset_len": 1438, "shuffle": True}
    assert checkpoint["dataloader"] == {**position, **read_with}
    (rng,) = checkpoint["rng_states"]  # one entry per rank
    assert set(rng) >= {"python", "numpy", "torch"}


@HOOKS.register_module()
class InterruptAfterEpoch(Hook):
    """Raises at the end of epoch ``at`` (1-based), after its checkpoint, before validation."""

    priority = "LOWEST"

    def __init__(self, at: int):
        self.at = at

    def after_train_epoch(self, runner):
        if runner.epoch + 1 == self.at:
            raise Interrupted(f"stopped after epoch {self.at}")


@HOOKS.register_module()
class CountValidations(Hook):
    """Keeps the epoch (or iteration) count at each validation in the message hub
    ('validated')."""

    def __init__(self, by_epoch=True):
        self.by_epoch = by_epoch

    def after_val_epoch(self, runner, metrics=None):
        seen = runner.message_hub.get_info("validated", [])
        at = runner.epoch if self.by_epoch else runner.iter
        runner.message_hub.update_info("validated", [*seen, at], resumed=False)


def plateau_cfg(work_dir: Path, **changes) -> Config:
    """3 epochs whose learning rate halves after validation 2 (the first sets the best value,
    which no later one beats by 1000; the one after the last epoch is past the schedule's
    end); a checkpoint at the end of each epoch, as CheckpointHook saves by default."""
    return digits_cfg(
        work_dir,
        **{
            "train_cfg.max_epochs": 3,
            "param_scheduler": dict(
                _delete_=True,
                type="ReduceOnPlateauLR",
                monitor="accuracy/top1",
                rule="greater",
                threshold=1000,
                threshold_rule="abs",
                patience=0,
                factor=0.5,
            ),
            "default_hooks.checkpoint": dict(_delete_=True, type="CheckpointHook", interval=1),
            "custom_hooks": [dict(type="CountValidations")],
            **changes,
        },
    )


def train_counting(cfg: Config) -> tuple[dict, list, float]:
    runner = Runner.from_cfg(cfg)
    runner.train()
    state = {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}
    return state, runner.message_hub.get_info("validated"), runner.optim_wrapper.get_lr()["lr"]


def test_a_resume_runs_the_validation_its_checkpoint_was_saved_before(tmp_path):
    """epoch_2.pth is written in after_train_epoch, before validation 2 halves the learning
    rate; the resumed run validates first, so epoch 3 trains at the rate it had unbroken."""
    expected, validated, lr = train_counting(plateau_cfg(tmp_path / "straight"))
    assert validated == [1, 2, 3] and lr == [0.05]
    cfg = plateau_cfg(tmp_path / "resumed")
    first = cfg.copy()
    first.custom_hooks = [*cfg.custom_hooks, dict(type="InterruptAfterEpoch", at=2)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "epoch_2.pth")
    resumed, validated, lr = train_counting(second)
    assert validated == [2, 3] and lr == [0.05]
    assert_same(expected, resumed)
    logs = "".join(path.read_text() for path in Path(cfg.work_dir).glob("*/*.log"))
    assert (
        "validating after epoch 2 first: a validation is due there under this config, and the "
        "checkpoint resumed from was saved before one ran"
    ) in logs


def test_a_checkpoint_saved_while_validating_is_not_validated_again(tmp_path):
    cfg = plateau_cfg(tmp_path / "run", **{"default_hooks.checkpoint.save_best": "auto"})
    cfg.custom_hooks.append(dict(type="InterruptAfterEpoch", at=2))
    with pytest.raises(Interrupted):
        Runner.from_cfg(cfg).train()
    (best,) = Path(cfg.work_dir).glob("best_*epoch_1.pth")  # saved in validation 1
    assert torch.load(best, weights_only=True)["meta"]["validated_at"] == 1
    resumed = cfg.copy()
    resumed.work_dir = str(tmp_path / "resumed")
    resumed.resume = str(best)
    resumed.custom_hooks = [dict(type="CountValidations")]
    _, validated, _ = train_counting(resumed)
    assert validated == [2, 3]


def test_a_checkpoint_saved_again_for_a_new_best_resumes_the_next_epoch_in_full(tmp_path):
    """Validation 1 is always a new best, so epoch_1.pth is written again after it, once the
    epoch has ended; a resume from it trains epochs 2 and 3 in full (it skipped epoch 2's
    batches when the data position still counted the finished pass)."""
    changes = {"default_hooks.checkpoint.save_best": "auto"}
    straight = plateau_cfg(tmp_path / "straight", **changes)
    expected, _, _ = train_counting(straight)
    checkpoint = Path(straight.work_dir) / "epoch_1.pth"
    saved = torch.load(checkpoint, weights_only=True)
    assert saved["meta"]["validated_at"] == 1  # the copy written after validation 1
    resumed_cfg = plateau_cfg(tmp_path / "resumed", **changes)
    resumed_cfg.resume = str(checkpoint)
    resumed, validated, _ = train_counting(resumed_cfg)
    assert validated == [2, 3]
    assert_same(expected, resumed)


def test_an_iteration_based_resume_runs_the_validation_its_checkpoint_missed(tmp_path):
    changes = {
        "train_cfg": dict(_delete_=True, by_epoch=False, max_iters=60, val_interval=20),
        "train_dataloader.sampler": dict(type="InfiniteSampler", shuffle=True),
        "param_scheduler": [],
        "log_processor.by_epoch": False,
        "default_hooks.checkpoint": dict(
            _delete_=True, type="CheckpointHook", by_epoch=False, interval=20
        ),
        "custom_hooks": [dict(type="CountValidations", by_epoch=False)],
    }
    cfg = digits_cfg(tmp_path / "run", **changes)
    first = cfg.copy()
    first.custom_hooks = [*cfg.custom_hooks, dict(type="InterruptAtIter", at=40)]
    with pytest.raises(Interrupted):  # iter_40.pth is saved, its validation never runs
        Runner.from_cfg(first).train()
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "iter_40.pth")
    _, validated, _ = train_counting(second)
    assert validated == [40, 60]


def test_resume_with_load_from_resumes_from_load_from_as_in_mmengine(tmp_path):
    # MMEngine's resume_training.md: resume=True with load_from continues from that file,
    # not from the newest checkpoint of the work dir
    checkpoint = dict(type="CheckpointHook", by_epoch=True, interval=1)
    changes = {"train_cfg.max_epochs": 3, "default_hooks.checkpoint": checkpoint}
    Runner.from_cfg(digits_cfg(tmp_path, **changes)).train()
    assert (tmp_path / "epoch_3.pth").exists()
    again = digits_cfg(tmp_path, **changes)
    again.resume, again.load_from = True, str(tmp_path / "epoch_2.pth")
    runner = Runner.from_cfg(again)
    runner.train()  # epoch 3 again
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert f"resumed from {tmp_path / 'epoch_2.pth'}: 2 epochs (46 iterations) done, " in log
    again.load_from = None  # without load_from: the newest checkpoint, nothing left to train
    newest = Runner.from_cfg(again)
    newest.train()
    log = Path(newest.log_dir, f"{newest.timestamp}.log").read_text()
    assert f"resumed from {tmp_path / 'epoch_3.pth'}: 3 epochs (69 iterations) done, nothing" in log


def test_checkpoints_carry_the_dataset_meta_and_a_resume_checks_it(tmp_path):
    changes = {
        "train_cfg.max_epochs": 1,
        "default_hooks.checkpoint": dict(type="CheckpointHook", by_epoch=True, interval=1),
    }
    runner = Runner.from_cfg(digits_cfg(tmp_path, **changes))
    runner.train()
    checkpoint = load_checkpoint(str(tmp_path / "epoch_1.pth"))
    classes = runner.train_dataloader.dataset.metainfo["classes"]
    assert checkpoint["meta"]["dataset_meta"] == {"classes": classes}  # MMEngine's key

    checkpoint["meta"]["dataset_meta"] = {"classes": ("cat", "dog")}
    torch.save(checkpoint, tmp_path / "other.pth")
    again = digits_cfg(tmp_path, **{**changes, "train_cfg.max_epochs": 2})
    again.resume = str(tmp_path / "other.pth")
    resumed = Runner.from_cfg(again)
    resumed.train()
    log = Path(resumed.log_dir, f"{resumed.timestamp}.log").read_text()
    assert "the training dataset's metainfo differs from the one the checkpoint" in log


@pytest.mark.parametrize(
    ("resume", "load_from", "key"),
    [
        (False, "missing/epoch_3.pth", "load_from"),
        (True, "missing/epoch_3.pth", "load_from"),
        ("missing/epoch_3.pth", None, "resume"),
    ],
)
def test_a_missing_checkpoint_is_named_by_its_key_and_where_it_was_looked_for(
    tmp_path, monkeypatch, resume, load_from, key
):
    monkeypatch.chdir(tmp_path)
    cfg = digits_cfg(tmp_path / "work", resume=resume, load_from=load_from)
    runner = Runner.from_cfg(cfg)
    expected = (
        f"{key}: checkpoint not found: missing/epoch_3.pth (no such file, read from {tmp_path})"
    )
    with pytest.raises(FileNotFoundError) as caught:
        runner.train()
    assert str(caught.value) == expected
    assert runner.iter == 0


@pytest.mark.parametrize("seed", ["abc", 1.5, True])
def test_a_seed_that_is_not_an_int_is_refused_naming_randomness_seed(tmp_path, seed):
    with pytest.raises(TypeError, match=rf"randomness\.seed must be an int.* got {seed!r} \("):
        Runner.from_cfg(digits_cfg(tmp_path, randomness=dict(seed=seed)))


def test_load_from_names_the_tensors_of_another_shape_in_the_log(tmp_path):
    """Weights of another shape loaded to fine-tune (not to evaluate, which is refused): the
    log says which tensors were not loaded (not as 'missing': the checkpoint has them)."""
    cfg = digits_cfg(tmp_path / "wide", **{"model.channels": (16, 48)})
    wide = Runner.from_cfg(cfg).unwrapped_model
    path = tmp_path / "wide.pth"
    save_checkpoint({"state_dict": wide.state_dict()}, path)
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work"))
    runner.load_checkpoint(str(path))
    log = next((tmp_path / "work").glob("*/*.log")).read_text()
    changed = [
        key
        for key, value in wide.state_dict().items()
        if value.shape != runner.unwrapped_model.state_dict()[key].shape
    ]
    assert changed  # the second conv and the classifier
    line = next(line for line in log.splitlines() if "were not loaded" in line)
    assert "WARNING" in line and f"{len(changed)} checkpoint tensor(s)" in line
    assert all(f"{key}: checkpoint (" in line for key in changed)
    assert "missing keys" not in log


def test_load_from_a_work_dir_says_which_file_to_give(tmp_path):
    trained = digits_cfg(tmp_path / "work", **{"train_cfg.max_epochs": 1})
    trained.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    Runner.from_cfg(trained).train()
    newest = tmp_path / "work" / "epoch_1.pth"
    runner = Runner.from_cfg(digits_cfg(tmp_path / "other", load_from=str(tmp_path / "work")))
    with pytest.raises(FileNotFoundError) as caught:
        runner.test()
    assert str(caught.value) == (
        f"load_from: {tmp_path / 'work'} is not a sharded checkpoint (it has no .metadata); it "
        f"looks like a work dir: give one of its checkpoints, such as {newest}, or, to continue "
        "the run saved there, resume=True (tools/train.py --resume) with that work_dir"
    )


@pytest.fixture
def one_epoch(tmp_path) -> Path:
    """The digits example trained for one epoch: its epoch_1.pth."""
    cfg = digits_cfg(tmp_path / "first", **{"train_cfg.max_epochs": 1})
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    Runner.from_cfg(cfg).train()
    return tmp_path / "first" / "epoch_1.pth"


def test_resuming_from_a_weights_only_checkpoint_says_what_starts_over(tmp_path, one_epoch):
    checkpoint = load_checkpoint(one_epoch)
    weights_only = tmp_path / "published.pth"
    save_checkpoint({key: checkpoint[key] for key in ("meta", "state_dict")}, weights_only)
    runner = Runner.from_cfg(digits_cfg(tmp_path / "work", resume=str(weights_only)))
    runner.train()
    log = next((tmp_path / "work").glob("*/*.log")).read_text()
    assert (
        f"WARNING - resume: {weights_only} has no optimizer or param_schedulers state (a "
        "published or weights-only checkpoint), so they start over at epoch 1, iteration 23"
    ) in log


def test_resuming_with_another_optimizer_type_is_refused_naming_the_cure(tmp_path, one_epoch):
    cfg = digits_cfg(tmp_path / "work", resume=str(one_epoch))
    cfg.optim_wrapper.optimizer = dict(type="AdamW", lr=1e-3)
    runner = Runner.from_cfg(cfg)
    with pytest.raises(ValueError) as caught:
        runner.train()
    assert str(caught.value).startswith(f"resume: the optimizer state in {one_epoch} has ")
    assert "momentum" in str(caught.value)
    assert "which AdamW does not: it was saved by another optimizer type" in str(caught.value)
    assert "load_from=<the checkpoint> and resume=False" in str(caught.value)


def test_a_new_run_in_a_work_dir_with_checkpoints_warns_and_a_resumed_one_does_not(
    tmp_path, one_epoch
):
    work = one_epoch.parent
    warning = f"WARNING - {work} holds the checkpoints of an earlier run (its last: {one_epoch})"
    for resume, warned in ((False, True), (True, False)):
        cfg = digits_cfg(work, resume=resume, **{"train_cfg.max_epochs": 1})
        runner = Runner.from_cfg(cfg)
        runner.train()
        log = (work / runner.timestamp / f"{runner.timestamp}.log").read_text()
        assert (warning in log) is warned
