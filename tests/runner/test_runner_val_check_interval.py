"""train_cfg.val_check_interval (Lightning's): validations part-way through an epoch, after
the right batches, only in epochs whose end-of-epoch validation is due; the hooks that act on
metrics (best checkpoint, early stopping, ReduceOnPlateau, the logger) work there as at an
epoch end, and a resume from inside the epoch is exact."""

import json
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from runnerx import DATASETS, HOOKS, METRICS, MODELS, Config
from runnerx.evaluator.metric import BaseMetric
from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.runner import Runner

BATCHES = 10  # training batches per epoch: 40 samples in batches of 4


@DATASETS.register_module()
class ValCheckNumbers(torch.utils.data.Dataset):
    """``size`` random 4-value inputs with a label of 0 or 1 (the same in every run)."""

    def __init__(self, size):
        generator = torch.Generator().manual_seed(size)
        self.inputs = torch.randn(size, 4, generator=generator)
        self.labels = (self.inputs.sum(dim=1) > 0).long()

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        return dict(inputs=self.inputs[index], data_samples=self.labels[index])


@MODELS.register_module()
class ValCheckNet(BaseModel):
    """One linear layer: a training step costs next to nothing."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.linear(inputs)
        if mode == "loss":
            return dict(loss=F.cross_entropy(logits, data_samples))
        return dict(pred=logits.argmax(dim=1), gt=data_samples)


@METRICS.register_module()
class ValCheckRounds(BaseMetric):
    """'round': how many validations this metric has computed (so every one is a new best
    by rule 'greater'); 'flat': always 1.0 (never improves)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.rounds = 0

    def process(self, data_batch, data_samples):
        self.results.extend(data_samples["gt"].tolist())

    def compute_metrics(self, results):
        self.rounds += 1
        return {"round": self.rounds, "flat": 1.0}


@HOOKS.register_module()
class ValCheckRecorder(Hook):
    """The iteration count at each validation (in ``before_val`` and ``after_val_epoch``),
    the finished epochs there, and whether the model trained in train mode."""

    priority = "LOWEST"  # after the checkpoint and early-stopping hooks

    def __init__(self):
        self.began = []
        self.validated = []
        self.epochs = []
        self.train_mode = []

    def before_val(self, runner):
        self.began.append(runner.iter)

    def after_val_epoch(self, runner, metrics=None):
        self.validated.append(runner.iter)
        self.epochs.append(runner.epoch)

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.train_mode.append(runner.model.training)


class Interrupted(Exception):
    """Stands for the process being killed."""


@HOOKS.register_module()
class ValCheckInterrupt(Hook):
    """Raises after iteration ``at`` (1-based) and its hooks, before any validation."""

    priority = "LOWEST"

    def __init__(self, at):
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            raise Interrupted(f"stopped after iteration {self.at}")


def loader(size, batch_size, shuffle):
    return dict(
        batch_size=batch_size,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
        dataset=dict(type="ValCheckNumbers", size=size),
    )


def tiny_cfg(work_dir, **train_cfg) -> Config:
    """2 epochs of 10 batches, validating every 2 batches unless ``train_cfg`` says else;
    no checkpoints unless a test asks for them."""
    return Config(
        dict(
            model=dict(type="ValCheckNet"),
            work_dir=str(work_dir),
            train_dataloader=loader(40, 4, shuffle=True),
            train_cfg=dict(dict(by_epoch=True, max_epochs=2, val_check_interval=0.25), **train_cfg),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),  # stateless: see resume
            val_dataloader=loader(8, 8, shuffle=False),
            val_cfg=dict(),
            val_evaluator=dict(type="ValCheckRounds"),
            default_hooks=dict(checkpoint=None, preemption=None, model_summary=None),
            custom_hooks=[dict(type="ValCheckRecorder")],
            visualizer=dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")]),
            randomness=dict(seed=0),
            log_level="WARNING",
        )
    )


def train(cfg: Config) -> tuple[Runner, ValCheckRecorder]:
    runner = Runner.from_cfg(cfg)
    runner.train()
    return runner, recorder(runner)


def stopped_after(cfg: Config, iteration: int) -> None:
    """Train ``cfg`` until the hooks after ``iteration`` (1-based) stop it, as a crash would."""
    first = cfg.copy()
    first.custom_hooks = [*cfg.custom_hooks, dict(type="ValCheckInterrupt", at=iteration)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()


def recorder(runner) -> ValCheckRecorder:
    return next(hook for hook in runner.hooks if isinstance(hook, ValCheckRecorder))


def weights(runner) -> dict:
    return {key: value.clone() for key, value in runner.unwrapped_model.state_dict().items()}


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        # a share: every int(10 * 0.25) = 2 batches; the check at batch 10 is the epoch end's
        (0.25, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20]),
        (0.35, [3, 6, 9, 10, 13, 16, 19, 20]),  # 3 batches, counted from each epoch's start
        (4, [4, 8, 10, 14, 18, 20]),
        (0.01, list(range(1, 21))),  # at least one batch
        (1.0, [10, 20]),  # a whole epoch: the epoch ends only (Lightning's default)
        (BATCHES, [10, 20]),
        (None, [10, 20]),
    ],
)
def test_validates_after_every_n_batches_of_each_epoch_and_once_at_its_end(
    tmp_path, interval, expected
):
    runner, seen = train(tiny_cfg(tmp_path, val_check_interval=interval))
    assert seen.validated == seen.began == expected  # none doubled at an epoch's end
    # hooks see the finished epochs, as at an epoch end; epoch 2's checks see epoch 1
    assert seen.epochs == [(at - 1) // BATCHES + (at % BATCHES == 0) for at in expected]
    assert len(seen.train_mode) == 2 * BATCHES and all(seen.train_mode)  # trained again
    assert runner.train_loop.val_check_batches == (0 if expected == [10, 20] else expected[0])


def test_mid_epoch_checks_only_in_epochs_whose_validation_is_due(tmp_path):
    # val_begin=2 and val_interval=2 over 5 epochs: epochs 2, 4 and 5 (the last) validate
    cfg = tiny_cfg(tmp_path, max_epochs=5, val_begin=2, val_interval=2, val_check_interval=5)
    _, seen = train(cfg)
    assert seen.validated == [15, 20, 35, 40, 45, 50]


def test_dynamic_intervals_decide_the_epochs_with_mid_epoch_checks(tmp_path):
    # val_interval=3 over 5 epochs: epochs 3 and 5; with the milestone, epoch 4 too
    cfg = tiny_cfg(tmp_path, max_epochs=5, val_interval=3, dynamic_intervals=[(4, 1)])
    cfg.train_cfg.val_check_interval = 5
    _, seen = train(cfg)
    assert seen.validated == [25, 30, 35, 40, 45, 50]


def test_limit_batches_shortens_the_epoch_that_the_share_is_of(tmp_path):
    _, seen = train(tiny_cfg(tmp_path, limit_batches=8, val_check_interval=0.5))
    assert seen.validated == [4, 8, 12, 16]


def test_fast_dev_run_validates_once_at_its_end(tmp_path):
    cfg = tiny_cfg(tmp_path, val_check_interval=2)
    cfg.fast_dev_run = 5
    runner, seen = train(cfg)
    assert runner.iter == 5 and seen.validated == [5]


def test_validation_scalars_are_logged_at_the_iteration_count(tmp_path):
    runner, _ = train(tiny_cfg(tmp_path, val_check_interval=4))
    lines = Path(runner.log_dir, "vis_data", "scalars.json").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    val_rows = [row for row in rows if "round" in row]
    # distinct steps: the mid-epoch ones and the epoch ends, in order
    assert [(row["step"], row["round"]) for row in val_rows] == [
        (4, 1),
        (8, 2),
        (10, 3),
        (14, 4),
        (18, 5),
        (20, 6),
    ]


def test_validation_scalars_stay_at_the_epoch_without_mid_epoch_checks(tmp_path):
    runner, _ = train(tiny_cfg(tmp_path, val_check_interval=None))
    lines = Path(runner.log_dir, "vis_data", "scalars.json").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines if '"round"' in line] == [1, 2]


def test_early_stopping_in_a_mid_epoch_validation_ends_the_epoch_there(tmp_path):
    cfg = tiny_cfg(tmp_path, max_epochs=3)
    # 'flat' never improves: validation 1 sets the best, validation 2 (after batch 4) stops
    cfg.custom_hooks.append(
        dict(type="EarlyStoppingHook", monitor="flat", rule="greater", patience=1)
    )
    runner, seen = train(cfg)
    assert seen.validated == [2, 4]  # not validated again at the shortened epoch's end
    assert runner.iter == 4 and runner.epoch == 1  # the epoch ended there, as stop_training does
    assert len(seen.train_mode) == 4


def test_reduce_on_plateau_steps_after_each_mid_epoch_validation(tmp_path):
    cfg = tiny_cfg(tmp_path, max_epochs=1, val_check_interval=3)
    cfg.param_scheduler = dict(
        type="ReduceOnPlateauLR", monitor="flat", rule="greater", patience=0, factor=0.5
    )
    runner, seen = train(cfg)
    assert seen.validated == [3, 6, 9, 10]
    # the first validation sets the best, the next two halve the rate; the one after the last
    # epoch is past the schedule's end (max_epochs), as without mid-epoch checks
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.1 / 4)]


def test_a_mid_epoch_best_checkpoint_resumes_at_the_next_batch_exactly(tmp_path):
    straight = tiny_cfg(tmp_path / "straight")
    expected = weights(train(straight)[0])

    cfg = tiny_cfg(tmp_path / "run")
    cfg.default_hooks.checkpoint = dict(
        type="CheckpointHook", interval=-1, save_best="round", rule="greater"
    )
    # stopped after iteration 15: the newest best is from the validation after iteration 14
    stopped_after(cfg, 15)
    (best,) = Path(cfg.work_dir).glob("best_round_*.pth")
    saved = torch.load(best, weights_only=True)
    assert (saved["meta"]["epoch"], saved["meta"]["iter"]) == (1, 14)
    assert saved["dataloader"]["batches"] == 4  # 4 batches into epoch 2

    second = cfg.copy()
    second.merge_from_dict({"resume": True, "load_from": str(best)})
    runner, seen = train(second)
    assert len(seen.train_mode) == 6  # batches 5 to 10 of epoch 2
    assert seen.validated == [16, 18, 20]  # the one at 14 is not run again
    resumed = weights(runner)
    assert expected.keys() == resumed.keys()
    for key, value in expected.items():
        assert torch.equal(value, resumed[key]), f"{key} differs after resuming"


def test_a_resume_runs_the_mid_epoch_validation_its_checkpoint_was_saved_before(tmp_path):
    cfg = tiny_cfg(tmp_path)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=6)
    # iter_6.pth is saved after iteration 6, and the run is stopped before its validation
    stopped_after(cfg, 6)
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "iter_6.pth")
    _, seen = train(second)
    assert seen.validated == [6, 8, 10, 12, 14, 16, 18, 20]


def test_a_resume_from_a_checkpoint_saved_while_validating_mid_epoch_does_not_repeat_it(
    tmp_path,
):
    cfg = tiny_cfg(tmp_path)
    # a new best at every validation: iter_6.pth is saved again after the one at 6
    cfg.default_hooks.checkpoint = dict(
        type="CheckpointHook", by_epoch=False, interval=6, save_best="round", rule="greater"
    )
    stopped_after(cfg, 7)
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "iter_6.pth")
    _, seen = train(second)
    assert seen.validated == [8, 10, 12, 14, 16, 18, 20]


def test_a_mid_epoch_best_of_an_epoch_based_checkpoint_hook_leaves_the_epochs_alone(tmp_path):
    cfg = tiny_cfg(tmp_path, val_check_interval=5)
    cfg.default_hooks.checkpoint = dict(
        type="CheckpointHook", interval=1, save_best="round", rule="greater"
    )
    cfg.custom_hooks.append(dict(type="ValCheckInterrupt", at=17))  # after the best at 15
    with pytest.raises(Interrupted):
        Runner.from_cfg(cfg).train()
    periodic = torch.load(Path(cfg.work_dir) / "epoch_1.pth", weights_only=True)
    assert periodic["meta"]["iter"] == BATCHES  # the state at the end of epoch 1
    (best,) = Path(cfg.work_dir).glob("best_round_*.pth")
    assert best.name == "best_round_iter_15.pth"  # saved during epoch 2, after 15 iterations


def log_of(runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


def test_a_mid_epoch_validation_line_names_the_epoch_in_progress_and_the_iteration(tmp_path):
    cfg = tiny_cfg(tmp_path, val_check_interval=4)
    cfg.log_level = "INFO"
    cfg.val_dataloader.batch_size = 2  # 4 batches: a line after the 2nd and the 4th
    cfg.default_hooks.logger = dict(type="LoggerHook", interval=2)
    runner, _ = train(cfg)
    lines = [line.split(" - INFO - ")[1] for line in log_of(runner).splitlines() if "(val)" in line]
    headers = [line.split("  ")[0] for line in lines]
    # each validation: lines after val batches 2 and 4, then its metrics line
    expected = []
    for epoch, note in [
        (1, " (mid-epoch, iter 4)"),
        (1, " (mid-epoch, iter 8)"),
        (1, ""),  # the epoch's end: MMEngine's lines
        (2, " (mid-epoch, iter 14)"),
        (2, " (mid-epoch, iter 18)"),
        (2, ""),
    ]:
        expected += [f"Epoch(val) [{epoch}][{n}/4]{note}" for n in (2, 4, 4)]
    assert headers == expected
    # an int metric shows as MMEngine shows it
    assert "Epoch(val) [1][4/4]    round: 3  flat: 1.0000  data_time: " in lines[8]


def early_stopping_cfg(work_dir, patience, **checkpoint) -> Config:
    """3 epochs validating every 2 batches; EarlyStoppingHook on 'flat', which never
    improves: it stops at the validation after ``patience`` more than the first."""
    cfg = tiny_cfg(work_dir, max_epochs=3)
    cfg.log_level = "INFO"
    cfg.custom_hooks.append(
        dict(type="EarlyStoppingHook", monitor="flat", rule="greater", patience=patience)
    )
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", **checkpoint)
    return cfg


@pytest.mark.parametrize(
    ("patience", "validated", "then"),
    [
        (1, [], "stops it again before training: raise patience to train on"),
        # raised: the saved wait count (1) is below it; the next one without improvement stops
        (2, [6], "lets training go on"),
    ],
    ids=["patience used up", "patience raised"],
)
def test_a_resume_after_an_early_stop_in_a_mid_epoch_validation_does_not_validate_again(
    tmp_path, patience, validated, then
):
    cfg = early_stopping_cfg(tmp_path, patience=1, interval=1)
    runner, seen = train(cfg)
    assert seen.validated == [2, 4] and runner.iter == 4  # stopped in the check after batch 4

    second = early_stopping_cfg(tmp_path, patience=patience, interval=1)
    second.resume = True  # epoch_1.pth, saved when the stop ended the epoch
    runner, seen = train(second)
    log = log_of(runner)
    assert "and the checkpoint resumed from was saved before one ran" not in log
    assert seen.validated == validated and runner.iter == (validated or [4])[-1]
    assert (
        "WARNING - EarlyStoppingHook: the run resumed from was stopped early after iteration 4 "
        "(epoch 1): flat did not improve by 0.1 or more in the last 1 validations; the best "
        "value was 1.0000. Its saved state (best flat 1.0000, 1 validation(s) without "
        f"improvement) with patience={patience} {then}."
    ) in log


def test_a_checkpoint_without_the_early_stopping_state_starts_it_afresh_as_mmengine(tmp_path):
    cfg = early_stopping_cfg(tmp_path, patience=1, interval=1)
    train(cfg)
    path = Path(cfg.work_dir) / "epoch_1.pth"
    saved = torch.load(path, weights_only=True)
    assert saved["early_stopping"]["flat"]["wait_count"] == 1
    del saved["early_stopping"]  # as MMEngine (or an older runnerx) saves it
    torch.save(saved, path)
    second = cfg.copy()
    second.resume = str(path)
    runner, seen = train(second)
    assert seen.validated == [6, 8]  # a new best, then one without improvement
    assert "the run resumed from was stopped early" not in log_of(runner)


@pytest.mark.parametrize(
    "checkpoint",
    [
        dict(by_epoch=False, interval=6),  # iter_6.pth: saved before the validation at 6
        # a new best at every validation: iter_6.pth is saved again in the one at 6, before
        # EarlyStoppingHook (LOWEST) has seen it; a resume does not validate at 6 again
        dict(by_epoch=False, interval=6, save_best="round", rule="greater"),
    ],
)
def test_a_resumed_run_stops_early_where_the_unbroken_run_does(tmp_path, checkpoint):
    # patience 4: validations at 2 (the best), 4, 6, 8 and 10 (the 4th without improvement)
    runner, seen = train(early_stopping_cfg(tmp_path / "straight", patience=4))
    assert seen.validated == [2, 4, 6, 8, 10] and runner.iter == 10

    cfg = early_stopping_cfg(tmp_path / "run", patience=4, **checkpoint)
    stopped_after(cfg, 7)
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "iter_6.pth")
    runner, seen = train(second)
    assert seen.validated[-1] == 10 and runner.iter == 10


def test_an_epoch_end_checkpoint_of_a_resumed_run_resumes_exactly(tmp_path):
    expected = weights(train(tiny_cfg(tmp_path / "straight", max_epochs=3))[0])

    cfg = tiny_cfg(tmp_path / "run", max_epochs=3)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", by_epoch=False, interval=14)
    stopped_after(cfg, 15)  # iter_14.pth: 4 batches into epoch 2
    second = cfg.copy()
    second.resume = str(Path(cfg.work_dir) / "iter_14.pth")
    second.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    stopped_after(second, 21)  # epoch_2.pth, saved by the resumed run at epoch 2's end
    path = Path(cfg.work_dir) / "epoch_2.pth"
    position = torch.load(path, weights_only=True)["dataloader"]
    # its position is the whole of epoch 2 (pass 1), where an unbroken run that saves it
    # again after validating records pass 2 from its start: both start epoch 3 afresh
    assert (position["epoch"], position["batches"]) == (1, BATCHES)

    third = second.copy()
    third.resume = str(path)
    runner, seen = train(third)
    assert len(seen.train_mode) == BATCHES  # epoch 3 alone
    resumed = weights(runner)
    for key, value in expected.items():
        assert torch.equal(value, resumed[key]), f"{key} differs after resuming"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, r"must be None .* or an int >= 1 .* at most the 10 of an epoch\), got 0"),
        (-3, r"got -3"),
        (0.0, r"got 0\.0"),
        (-0.5, r"got -0\.5"),
        (1.5, r"a float in \(0, 1\] .* got 1\.5"),
        (True, r"got True"),
        ("0.25", r"got '0\.25'"),
        (11, r"=11 is more than the 10 training batches .*by_epoch=False.*val_interval=11"),
    ],
)
def test_a_bad_value_is_an_error_naming_the_key(tmp_path, value, message):
    runner = Runner.from_cfg(tiny_cfg(tmp_path, val_check_interval=value))
    with pytest.raises(ValueError, match=r"train_cfg\.val_check_interval") as caught:
        runner.train_loop  # noqa: B018
    assert caught.match(message)


def test_an_iteration_based_loop_refuses_it_and_points_to_val_interval(tmp_path):
    cfg = tiny_cfg(tmp_path)
    cfg.train_cfg = dict(by_epoch=False, max_iters=20, val_check_interval=5)
    with pytest.raises(ValueError, match=r"val_check_interval=5 .* set train_cfg\.val_interval"):
        Runner.from_cfg(cfg).train_loop  # noqa: B018
