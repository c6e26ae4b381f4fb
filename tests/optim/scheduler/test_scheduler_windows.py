"""begin/end windows, and schedules checked against their closed-form formulas."""

import math

import pytest

from runnerx.optim import scheduler as ours
from runnerx.optim.scheduler import build_param_schedulers

BASE = [0.1, 0.05]  # the conftest optimizer's learning rates

WINDOWED = {
    "ConstantLR": dict(factor=0.5),
    "LinearLR": dict(start_factor=0.2),
    "StepLR": dict(step_size=3),
    "MultiStepLR": dict(milestones=[2, 9]),
    "ExponentialLR": dict(gamma=0.9),
    "CosineAnnealingLR": dict(eta_min=0.001),
    "CosineRestartLR": dict(periods=[6, 9], restart_weights=[1, 0.5]),
    "PolyLR": dict(power=2.0, eta_min=0.001),
    "OneCycleLR": dict(eta_max=0.3),
}


@pytest.mark.parametrize("name", list(WINDOWED))
def test_value_only_changes_inside_begin_end(name, make_optimizer, record):
    optimizer = make_optimizer()
    scheduler = getattr(ours, name)(optimizer, begin=5, end=20, **WINDOWED[name])
    curve = record(optimizer, scheduler.step, steps=40)
    if name != "OneCycleLR":  # OneCycle sets its own start value
        assert curve[:5] == [BASE] * 5
    assert curve[19:] == [curve[19]] * 21
    assert len({tuple(values) for values in curve[5:20]}) > 1
    assert scheduler.last_step == 14 and scheduler.get_last_value() == curve[-1]


def test_steps_are_counted_from_begin(make_optimizer, record):
    optimizer = make_optimizer()
    scheduler = ours.MultiStepLR(optimizer, milestones=[3], gamma=0.5, begin=4)
    curve = record(optimizer, scheduler.step, steps=10)
    assert [values[0] for values in curve] == [0.1] * 7 + [0.05] * 3  # 4 + 3 = step 7


def test_warmup_then_cosine_follows_the_closed_form(make_optimizer, record):
    warmup, total, start_factor, eta_min = 10, 50, 0.01, 1e-4
    optimizer = make_optimizer()
    schedulers = build_param_schedulers(
        [
            dict(type="LinearLR", start_factor=start_factor, by_epoch=False, end=warmup),
            dict(type="CosineAnnealingLR", eta_min=eta_min, by_epoch=False, begin=warmup),
        ],
        optimizer,
        max_iters=total,
    )
    assert schedulers[1].T_max == total - warmup  # end defaults to max_iters

    def expected(step, base):
        if step < warmup:
            return base * (start_factor + (1 - start_factor) * step / (warmup - 1))
        step = min(step, total - 1)
        progress = (step - warmup) / (total - warmup)
        return eta_min + (base - eta_min) * (1 + math.cos(math.pi * progress)) / 2

    def step_all():
        for scheduler in schedulers:
            scheduler.step()

    curve = record(optimizer, step_all, steps=total + 10)
    for step, values in enumerate(curve):
        assert values == pytest.approx([expected(step, base) for base in BASE], rel=1e-10), step


@pytest.mark.parametrize("floor", [dict(eta_min=0.001), dict(eta_min_ratio=0.1)])
def test_cosine_restart_follows_its_formula(floor, make_optimizer, record):
    periods, weights = [5, 10, 8], [1.0, 0.6, 0.3]
    optimizer = make_optimizer()
    scheduler = ours.CosineRestartLR(
        optimizer, periods=periods, restart_weights=weights, by_epoch=False, **floor
    )

    def expected(step, base):
        step = min(step, sum(periods) - 1)  # after the last period the value stays
        restart = 0
        for period, weight in zip(periods, weights):
            if step < restart + period:
                low = floor.get("eta_min", base * floor.get("eta_min_ratio", 0))
                cosine = (1 + math.cos(math.pi * (step - restart) / period)) / 2
                return low + (base * weight - low) * cosine
            restart += period
        raise AssertionError

    for step, values in enumerate(record(optimizer, scheduler.step, steps=35)):
        assert values == pytest.approx([expected(step, base) for base in BASE], rel=1e-10), step


def test_iteration_warmup_multiplies_an_epoch_step_decay(make_optimizer, run_like_the_hook):
    epoch_length, warmup, gamma = 4, 10, 0.1
    optimizer = make_optimizer()
    schedulers = build_param_schedulers(
        [
            dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=warmup),
            dict(type="MultiStepLR", milestones=[2, 4], gamma=gamma, by_epoch=True),
        ],
        optimizer,
    )
    curve = run_like_the_hook(optimizer, schedulers, 6, epoch_length)
    for iteration, values in enumerate(curve):
        epoch = iteration // epoch_length
        warm = 0.001 + 0.999 * iteration / (warmup - 1) if iteration < warmup else 1.0
        decay = gamma ** sum(epoch >= milestone for milestone in (2, 4))
        assert values == pytest.approx([b * warm * decay for b in BASE], rel=1e-10), iteration


def test_schedulers_on_one_param_compose_from_the_first_initial_value(make_optimizer, record):
    optimizer = make_optimizer()
    first = ours.ExponentialLR(optimizer, gamma=0.9)
    first.step()
    second = ours.ExponentialLR(optimizer, gamma=0.8)
    assert second.base_values == first.base_values == BASE
    assert [group["initial_lr"] for group in optimizer.param_groups] == BASE

    def step_both():
        first.step()
        second.step()

    curve = record(optimizer, step_both, steps=6)
    assert [values[0] for values in curve] == pytest.approx(
        [0.1 * 0.9] + [0.1 * 0.9 * 0.72**k for k in range(1, 6)]
    )


def test_verbose_logs_each_change_inside_the_window_only(make_optimizer, current_lines):
    optimizer = make_optimizer()
    scheduler = ours.StepLR(optimizer, step_size=1, gamma=0.5, begin=1, end=2, verbose=True)
    scheduler.step()
    scheduler.step()
    assert current_lines == [
        "Adjusting parameter value of group 0 to 1.0000e-01.",
        "Adjusting parameter value of group 1 to 5.0000e-02.",
    ]


def test_verbose_prints_when_no_logger_is_current(make_optimizer, monkeypatch, capsys):
    """As MMEngine's print_log(logger='current'), which makes a console logger then."""
    monkeypatch.setattr("runnerx.logging.logger._current_logger", None)
    ours.StepLR(make_optimizer(), step_size=1, gamma=0.5, verbose=True)
    assert capsys.readouterr().out.splitlines() == [
        "Adjusting parameter value of group 0 to 1.0000e-01.",
        "Adjusting parameter value of group 1 to 5.0000e-02.",
    ]


def test_step_hands_each_change_to_print_value(make_optimizer):
    class Recording(ours.MultiStepLR):
        def print_value(self, is_verbose, group, value):
            self.printed = [*getattr(self, "printed", []), (is_verbose, group, value)]

    scheduler = Recording(make_optimizer(), milestones=[1], gamma=0.5)
    scheduler.step()
    assert scheduler.printed[2:] == [(False, 0, 0.05), (False, 1, 0.025)]
