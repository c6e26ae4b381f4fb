"""A scheduler whose begin or end lies past the end of training is named once when training
starts (its schedule never finishes: a cosine's lr never reaches eta_min), in the unit of its
config; an end left out, a fast_dev_run and a val-only run say nothing."""

import math
from pathlib import Path

import pytest

from tests.hooks.test_hooks_with_runner import make_runner

# 8 samples in batches of 2: 4 iterations per epoch
COSINE = dict(type="CosineAnnealingLR", by_epoch=True, begin=0, end=8, eta_min=0.0)
NEVER_FINISHES = (
    "its schedule never finishes, so the value it sets never reaches its last one (the lr "
    "never reaches a cosine's eta_min, a warmup never ends); "
)


def warnings_of(runner) -> list[str]:
    """The WARNING messages of the runner's log."""
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    return [line.split(" - WARNING - ")[1] for line in log.splitlines() if " - WARNING - " in line]


def test_an_epoch_end_past_max_epochs_is_named_with_the_end_to_set(tmp_path):
    warmup = dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=2)
    runner = make_runner(tmp_path, param_scheduler=[warmup, COSINE])
    runner.train()
    assert warnings_of(runner) == [
        "param_scheduler[1] (type='CosineAnnealingLR') has end=8 (epochs), past the end of "
        f"training, train_cfg.max_epochs=2: {NEVER_FINISHES}set param_scheduler[1].end=2, or "
        "leave end out (it defaults to the end of training)"
    ]
    # what it says: the lr is still far from eta_min=0 when training ends
    last_lr = runner.message_hub.get_scalar("train/lr").current()
    assert last_lr == pytest.approx(0.1 * (1 + math.cos(math.pi / 8)) / 2)


def test_a_converted_end_is_counted_in_iterations_and_in_epochs(tmp_path):
    converted = dict(COSINE, end=4, convert_to_iter_based=True)
    runner = make_runner(tmp_path, param_scheduler=[converted])
    runner.train()
    assert warnings_of(runner) == [
        "param_scheduler[0] (type='CosineAnnealingLR') has end=16 (iterations: 4 epochs of 4), "
        "past the end of training, train_cfg.max_epochs=2 (2 x 4 = 8 iterations): "
        f"{NEVER_FINISHES}set param_scheduler[0].end=8 (by_epoch=False), or end=2 with "
        "convert_to_iter_based=True, or leave end out (it defaults to the end of training)"
    ]


def test_in_an_iteration_loop_a_begin_past_max_iters_never_acts(tmp_path):
    late = dict(type="ConstantLR", factor=0.5, by_epoch=False, begin=6, end=9)
    long = dict(type="LinearLR", start_factor=0.5, by_epoch=False, begin=0, end=100)
    runner = make_runner(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=6, val_interval=100),
        param_scheduler=[late, long],
    )
    runner.train()
    assert warnings_of(runner) == [
        "param_scheduler[0] (type='ConstantLR') has begin=6 (iterations), at or past the end "
        "of training, train_cfg.max_iters=6: it never acts; lower its begin, or remove it",
        "param_scheduler[1] (type='LinearLR') has end=100 (iterations), past the end of "
        f"training, train_cfg.max_iters=6: {NEVER_FINISHES}set param_scheduler[1].end=6, or "
        "leave end out (it defaults to the end of training)",
    ]


@pytest.mark.parametrize(
    "settings",
    [
        dict(param_scheduler=[dict(COSINE, end=2), dict(type="StepLR", step_size=1)]),
        dict(param_scheduler=[COSINE], fast_dev_run=1),
    ],
    ids=["in_time_or_left_out", "fast_dev_run"],
)
def test_ends_in_time_and_a_fast_dev_run_say_nothing(tmp_path, settings):
    runner = make_runner(tmp_path, **settings)
    runner.train()
    assert not [line for line in warnings_of(runner) if "past the end" in line]
