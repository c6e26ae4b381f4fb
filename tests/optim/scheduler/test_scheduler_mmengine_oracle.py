"""The same ``param_scheduler`` config gives the same values here as in MMEngine (mmengine-lite),
stepped as the ParamSchedulerHook steps it: epoch-based, iteration-based and epoch-based
converted to iterations (``convert_to_iter_based=True``)."""

import copy

import pytest

from runnerx.optim.scheduler import build_param_schedulers

mmengine_registry = pytest.importorskip("mmengine.registry")
pytest.importorskip("mmengine.optim")

EPOCH_LENGTH, EPOCHS = 7, 12

# Each in epochs; every one is run epoch-based, iteration-based and converted.
SHAPES = {
    "Constant": dict(factor=0.5, begin=1, end=4),
    "Linear": dict(start_factor=0.1, end_factor=0.9, begin=0, end=3),
    "Step": dict(step_size=2, gamma=0.5, begin=1, end=10),
    "MultiStep": dict(milestones=[3, 7, 9], gamma=0.2, begin=0, end=11),
    "Exponential": dict(gamma=0.97, begin=2, end=9),
    "CosineAnnealing": dict(eta_min=1e-4, begin=1, end=12),
    "CosineRestart": dict(periods=[4, 6], restart_weights=[1, 0.5], eta_min=1e-4, end=10),
    "Poly": dict(eta_min=1e-4, power=0.9, begin=0, end=12),
}
EXTRA = {
    "CosineAnnealingLR-T_max-ratio": dict(
        type="CosineAnnealingLR", T_max=3, eta_min_ratio=0.01, begin=2
    ),
    "CosineRestartLR-ratio": dict(
        type="CosineRestartLR", periods=[3, 3, 5], restart_weights=[1, 0.7, 0.2], eta_min_ratio=0.1
    ),
    "OneCycleLR": dict(type="OneCycleLR", eta_max=0.5, total_steps=12, end=12),
    "OneCycleLR-three-phase-linear": dict(
        type="OneCycleLR",
        eta_max=[0.5, 0.2],
        total_steps=12,
        pct_start=0.4,
        anneal_strategy="linear",
        three_phase=True,
        end=12,
    ),
}


def _single_configs():
    for shape, kwargs in SHAPES.items():
        yield f"{shape}LR", "sgd", "lr", dict(type=f"{shape}LR", **kwargs)
        yield f"{shape}Momentum-sgd", "sgd", "momentum", dict(type=f"{shape}Momentum", **kwargs)
        yield f"{shape}Momentum-adam", "adam", "betas0", dict(type=f"{shape}Momentum", **kwargs)
        generic = dict(type=f"{shape}ParamScheduler", param_name="weight_decay", **kwargs)
        yield f"{shape}ParamScheduler", "sgd", "weight_decay", generic
    for name, cfg in EXTRA.items():
        yield name, "sgd", "lr", cfg


MODES = {
    "by-epoch": dict(by_epoch=True),
    "by-iter": dict(by_epoch=False),
    "converted": dict(by_epoch=True, convert_to_iter_based=True),
}

COMPOSED = {
    # mmdetection's usual schedule: iteration warm-up on top of an epoch step decay
    "warmup-multistep": [
        dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=20),
        dict(type="MultiStepLR", by_epoch=True, begin=0, end=12, milestones=[8, 11]),
    ],
    "warmup-cosine-converted": [
        dict(type="LinearLR", start_factor=0.01, by_epoch=False, begin=0, end=14),
        dict(
            type="CosineAnnealingLR",
            eta_min=1e-5,
            by_epoch=True,
            begin=2,
            end=12,
            convert_to_iter_based=True,
        ),
    ],
    "lr-and-momentum": [
        dict(type="OneCycleLR", eta_max=0.3, total_steps=EPOCHS * EPOCH_LENGTH, by_epoch=False),
        dict(type="CosineAnnealingMomentum", eta_min=0.85, begin=0, end=EPOCHS, by_epoch=True),
        dict(type="LinearMomentum", start_factor=0.5, by_epoch=False, begin=0, end=10),
    ],
}


def _build_mmengine(cfg_list, optimizer):
    built = []
    for cfg in copy.deepcopy(cfg_list):
        default = dict(optimizer=optimizer, epoch_length=EPOCH_LENGTH)
        if cfg.get("convert_to_iter_based") is None:
            default.pop("epoch_length")
        built.append(mmengine_registry.PARAM_SCHEDULERS.build(cfg, default_args=default))
    return built


def _compare(cfg_list, kind, key, make_optimizer, run_like_the_hook, assert_curves_equal):
    mine, theirs = make_optimizer(kind), make_optimizer(kind)
    ours = build_param_schedulers(cfg_list, mine, epoch_length=EPOCH_LENGTH)
    reference = _build_mmengine(cfg_list, theirs)
    assert [s.by_epoch for s in ours] == [s.by_epoch for s in reference]
    curves = [
        run_like_the_hook(optimizer, schedulers, EPOCHS, EPOCH_LENGTH, key)
        for optimizer, schedulers in ((mine, ours), (theirs, reference))
    ]
    assert_curves_equal(*curves, rel=1e-10)
    return mine, theirs, ours, reference


def _for_mode(cfg, mode):
    cfg = dict(cfg, **MODES[mode])
    if cfg["type"].startswith("OneCycle") and mode == "by-iter":
        cfg["total_steps"] = EPOCHS * EPOCH_LENGTH
        cfg["end"] = EPOCHS * EPOCH_LENGTH
    return cfg


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(
    ("kind", "key", "cfg"),
    [pytest.param(kind, key, cfg, id=name) for name, kind, key, cfg in _single_configs()],
)
def test_each_scheduler_matches_mmengine(
    cfg, kind, key, mode, make_optimizer, run_like_the_hook, assert_curves_equal
):
    _compare(
        [_for_mode(cfg, mode)], kind, key, make_optimizer, run_like_the_hook, assert_curves_equal
    )


@pytest.mark.parametrize("name", list(COMPOSED))
@pytest.mark.parametrize(("kind", "key"), [("sgd", "lr"), ("sgd", "momentum"), ("adam", "betas0")])
def test_composed_schedules_match_mmengine(
    name, kind, key, make_optimizer, run_like_the_hook, assert_curves_equal
):
    _compare(COMPOSED[name], kind, key, make_optimizer, run_like_the_hook, assert_curves_equal)


@pytest.mark.parametrize("name", list(COMPOSED))
def test_an_mmengine_scheduler_state_continues_here(
    name, make_optimizer, run_like_the_hook, assert_curves_equal, values
):
    """Resuming from MMEngine's optimizer and scheduler state dicts continues MMEngine's curve."""
    cfg_list = COMPOSED[name]
    theirs = make_optimizer("adam")
    reference = _build_mmengine(cfg_list, theirs)
    run_like_the_hook(theirs, reference, 5, EPOCH_LENGTH)
    mine = make_optimizer("adam")
    ours = build_param_schedulers(cfg_list, mine, epoch_length=EPOCH_LENGTH)
    mine.load_state_dict(theirs.state_dict())
    for scheduler, state in zip(ours, [s.state_dict() for s in reference]):
        scheduler.load_state_dict(state)
    for key in ("lr", "betas0"):
        assert_curves_equal(
            run_like_the_hook(mine, ours, 3, EPOCH_LENGTH, key),
            run_like_the_hook(theirs, reference, 3, EPOCH_LENGTH, key),
        )
