"""Every scheduler that torch.optim.lr_scheduler also has gives torch's curve, step by step."""

import pytest
import torch.optim.lr_scheduler as torch_schedulers

from runnerx.optim import scheduler as ours

STEPS = 60
# a linear three-phase cycle, the same for ours and torch's OneCycleLR
THREE_PHASE = dict(
    total_steps=STEPS,
    pct_start=0.25,
    anneal_strategy="linear",
    div_factor=10.0,
    final_div_factor=100.0,
    three_phase=True,
)

# (ours, torch): MMEngine's `end` is one past torch's `total_iters`, its last changing step.
LR_CASES = {
    "ConstantLR": (
        lambda o: ours.ConstantLR(o, factor=0.25, end=9),
        lambda o: torch_schedulers.ConstantLR(o, factor=0.25, total_iters=8),
    ),
    "LinearLR": (
        lambda o: ours.LinearLR(o, start_factor=0.05, end_factor=0.8, end=31),
        lambda o: torch_schedulers.LinearLR(o, start_factor=0.05, end_factor=0.8, total_iters=30),
    ),
    "StepLR": (
        lambda o: ours.StepLR(o, step_size=7, gamma=0.5),
        lambda o: torch_schedulers.StepLR(o, step_size=7, gamma=0.5),
    ),
    "MultiStepLR": (
        lambda o: ours.MultiStepLR(o, milestones=[5, 12, 12, 40], gamma=0.3),
        lambda o: torch_schedulers.MultiStepLR(o, milestones=[5, 12, 12, 40], gamma=0.3),
    ),
    "ExponentialLR": (
        lambda o: ours.ExponentialLR(o, gamma=0.93),
        lambda o: torch_schedulers.ExponentialLR(o, gamma=0.93),
    ),
    "CosineAnnealingLR": (  # past T_max the cosine goes up again, in both
        lambda o: ours.CosineAnnealingLR(o, T_max=15, eta_min=0.001),
        lambda o: torch_schedulers.CosineAnnealingLR(o, T_max=15, eta_min=0.001),
    ),
    "PolyLR": (
        lambda o: ours.PolyLR(o, power=1.7, end=41),
        lambda o: torch_schedulers.PolynomialLR(o, total_iters=40, power=1.7),
    ),
    "OneCycleLR-cos": (
        lambda o: ours.OneCycleLR(o, eta_max=[1.0, 0.3], total_steps=STEPS),
        lambda o: torch_schedulers.OneCycleLR(
            o, max_lr=[1.0, 0.3], total_steps=STEPS, cycle_momentum=False
        ),
    ),
    "OneCycleLR-linear-three-phase": (
        lambda o: ours.OneCycleLR(o, eta_max=0.4, **THREE_PHASE),
        lambda o: torch_schedulers.OneCycleLR(o, max_lr=0.4, cycle_momentum=False, **THREE_PHASE),
    ),
}


@pytest.mark.parametrize("case", list(LR_CASES))
def test_lr_curve_matches_torch(case, make_optimizer, record, assert_curves_equal):
    build_ours, build_torch = LR_CASES[case]
    mine, theirs = make_optimizer(), make_optimizer()
    ours_scheduler, torch_scheduler = build_ours(mine), build_torch(theirs)
    assert_curves_equal(
        record(mine, ours_scheduler.step, steps=STEPS),
        record(theirs, torch_scheduler.step, steps=STEPS),
    )


@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize(("kind", "key"), [("sgd", "momentum"), ("adam", "betas0")])
def test_one_cycle_momentum_matches_torchs_cycled_momentum(
    kind, key, three_phase, make_optimizer, values, assert_curves_equal
):
    cycle = dict(total_steps=STEPS, pct_start=0.4, three_phase=three_phase)
    mine, theirs = make_optimizer(kind), make_optimizer(kind)
    schedulers = [
        ours.OneCycleLR(mine, eta_max=0.5, **cycle),
        ours.OneCycleMomentum(mine, base_momentum=[0.8, 0.7], max_momentum=0.95, **cycle),
    ]
    torch_scheduler = torch_schedulers.OneCycleLR(
        theirs, max_lr=0.5, base_momentum=[0.8, 0.7], max_momentum=0.95, **cycle
    )
    curves = {"ours": [], "torch": []}
    for _ in range(STEPS):
        curves["ours"].append(values(mine, "lr") + values(mine, key))
        curves["torch"].append(values(theirs, "lr") + values(theirs, key))
        for scheduler in schedulers:
            scheduler.step()
        torch_scheduler.step()
    assert_curves_equal(curves["ours"], curves["torch"])
    assert curves["ours"][0][2:] == [0.95, 0.95]  # momentum starts at the top
    assert min(row[3] for row in curves["ours"]) == pytest.approx(0.7)


GENERIC_CASES = {
    "ConstantParamScheduler": ("ConstantLR", dict(factor=0.5, end=11)),
    "LinearParamScheduler": ("LinearLR", dict(start_factor=0.1, end=21)),
    "StepParamScheduler": ("StepLR", dict(step_size=4)),
    "MultiStepParamScheduler": ("MultiStepLR", dict(milestones=[3, 9])),
    "ExponentialParamScheduler": ("ExponentialLR", dict(gamma=0.9)),
    "CosineAnnealingParamScheduler": ("CosineAnnealingLR", dict(T_max=25, eta_min_ratio=0.1)),
    "CosineRestartParamScheduler": (
        "CosineRestartLR",
        dict(periods=[10, 20], restart_weights=[1, 0.5]),
    ),
    "PolyParamScheduler": ("PolyLR", dict(power=2.0, end=31)),
    "OneCycleParamScheduler": ("OneCycleLR", dict(eta_max=0.2, total_steps=STEPS)),
}


@pytest.mark.parametrize("generic", list(GENERIC_CASES))
def test_generic_scheduler_on_any_key_follows_the_lr_curve(
    generic, make_optimizer, record, assert_curves_equal
):
    lr_name, kwargs = GENERIC_CASES[generic]
    on_decay, on_lr = make_optimizer(), make_optimizer()
    for group in on_lr.param_groups:
        group["lr"] = group["weight_decay"]
    decay_scheduler = getattr(ours, generic)(on_decay, "weight_decay", **kwargs)
    lr_scheduler = getattr(ours, lr_name)(on_lr, **kwargs)
    decay_curve = record(on_decay, decay_scheduler.step, key="weight_decay", steps=STEPS)
    assert_curves_equal(decay_curve, record(on_lr, lr_scheduler.step, steps=STEPS))
    assert len({tuple(v) for v in decay_curve}) > 1  # it did change
    assert [group["lr"] for group in on_decay.param_groups] == [0.1, 0.05]  # lr untouched
