"""build_param_schedulers: the forms ``param_scheduler`` takes, and its errors."""

import pytest

from runnerx import Config
from runnerx.optim.scheduler import (
    CosineAnnealingLR,
    LinearLR,
    MultiStepLR,
    StepLR,
    build_param_schedulers,
)
from runnerx.registry import PARAM_SCHEDULERS, DefaultScope, Registry


def test_one_config_a_list_a_tuple_and_none(make_optimizer):
    optimizer = make_optimizer()
    (single,) = build_param_schedulers(dict(type="StepLR", step_size=2), optimizer)
    assert isinstance(single, StepLR) and single.by_epoch and single.optimizer is optimizer
    listed = build_param_schedulers(
        [dict(type="LinearLR", by_epoch=False, end=5), dict(type="MultiStepLR", milestones=[3])],
        optimizer,
    )
    assert [type(s) for s in listed] == [LinearLR, MultiStepLR]
    assert [s.by_epoch for s in listed] == [False, True]  # by_epoch defaults to True
    assert len(build_param_schedulers((dict(type="StepLR", step_size=2),), optimizer)) == 1
    assert build_param_schedulers(None, optimizer) == []


def test_built_schedulers_are_kept(make_optimizer):
    optimizer = make_optimizer()
    built = StepLR(optimizer, step_size=2)
    assert build_param_schedulers(built, optimizer) == [built]
    mixed = build_param_schedulers([built, dict(type="ExponentialLR", gamma=0.9)], optimizer)
    assert mixed[0] is built and len(mixed) == 2


def test_config_entries_are_not_changed(make_optimizer):
    cfg = Config(
        dict(param_scheduler=[dict(type="StepLR", step_size=2, convert_to_iter_based=True)])
    )
    build_param_schedulers(cfg.param_scheduler, make_optimizer(), epoch_length=3)
    build_param_schedulers(cfg.param_scheduler, make_optimizer(), epoch_length=3)
    assert cfg.param_scheduler[0].to_dict() == dict(
        type="StepLR", step_size=2, convert_to_iter_based=True
    )


def test_convert_to_iter_based_scales_epoch_counts(make_optimizer):
    (converted,) = build_param_schedulers(
        dict(type="MultiStepLR", milestones=[2, 5], begin=1, end=8, convert_to_iter_based=True),
        make_optimizer(),
        epoch_length=10,
    )
    assert not converted.by_epoch
    assert (converted.begin, converted.end) == (10, 80)
    assert dict(converted.milestones) == {20: 1, 50: 1}


@pytest.mark.parametrize(
    ("cls", "kwargs", "attribute", "expected"),
    [
        (StepLR, dict(step_size=3), "step_size", 12),
        (CosineAnnealingLR, dict(T_max=5), "T_max", 20),
        (CosineAnnealingLR, dict(end=6), "T_max", 24),
    ],
)
def test_build_iter_from_epoch(cls, kwargs, attribute, expected, make_optimizer):
    scheduler = cls.build_iter_from_epoch(make_optimizer(), epoch_length=4, **kwargs)
    assert getattr(scheduler, attribute) == expected and not scheduler.by_epoch


def test_default_end_is_the_train_loops_length(make_optimizer):
    epoch_based, iter_based, converted = build_param_schedulers(
        [
            dict(type="CosineAnnealingLR"),
            dict(type="LinearLR", by_epoch=False),
            dict(type="PolyLR", convert_to_iter_based=True),
        ],
        make_optimizer(),
        epoch_length=5,
        max_epochs=12,
        max_iters=60,
    )
    assert (epoch_based.end, epoch_based.T_max) == (12, 12)
    assert iter_based.end == 60
    assert converted.end == 60 and converted.total_iters == 59
    (explicit,) = build_param_schedulers(
        dict(type="StepLR", step_size=1, end=3), make_optimizer(), max_epochs=12
    )
    assert explicit.end == 3


class _Wrappers(dict):
    """Stands for an OptimWrapperDict: a mapping of names to optimizers or wrappers."""


def test_several_optimizers_share_one_config_with_separate_schedulers(make_optimizer):
    wrappers = _Wrappers(generator=make_optimizer(), discriminator=make_optimizer())
    built = build_param_schedulers([dict(type="StepLR", step_size=2)], wrappers)
    assert set(built) == {"generator", "discriminator"}
    assert built["generator"][0] is not built["discriminator"][0]
    assert built["generator"][0].optimizer is wrappers["generator"]


def test_several_optimizers_each_with_their_own_config(make_optimizer):
    wrappers = _Wrappers(generator=make_optimizer(), discriminator=make_optimizer())
    built = build_param_schedulers(
        dict(generator=dict(type="StepLR", step_size=2), discriminator=[]), wrappers
    )
    assert isinstance(built["generator"][0], StepLR) and built["discriminator"] == []


def test_a_duck_typed_optim_wrapper_dict_is_recognised(make_optimizer):
    class OptimWrapperDict:
        def __init__(self, **wrappers):
            self._wrappers = wrappers

        def items(self):
            return self._wrappers.items()

        def keys(self):
            return self._wrappers.keys()

    built = build_param_schedulers(
        dict(type="StepLR", step_size=2), OptimWrapperDict(g=make_optimizer(), d=make_optimizer())
    )
    assert set(built) == {"g", "d"}


def test_optimizer_names_are_checked(make_optimizer):
    wrappers = _Wrappers(generator=make_optimizer(), discriminator=make_optimizer())
    with pytest.raises(KeyError, match=r"no optimizer 'generater'.*did you mean 'generator'"):
        build_param_schedulers(dict(generater=[], discriminator=[]), wrappers)
    with pytest.raises(KeyError, match="no entry for optimizer 'discriminator'"):
        build_param_schedulers(dict(generator=[]), wrappers)
    with pytest.raises(KeyError, match="there is one optimizer"):
        build_param_schedulers(dict(generator=[]), make_optimizer())


def test_unknown_type_names_the_entry_and_a_close_match(make_optimizer):
    with pytest.raises(
        KeyError,
        match=r"param_scheduler\[1\]: 'CosineAnealingLR' is not .*"
        r"Did you mean 'CosineAnnealingLR'",
    ):
        build_param_schedulers(
            [dict(type="LinearLR"), dict(type="CosineAnealingLR")], make_optimizer()
        )


def test_missing_type_is_named(make_optimizer):
    with pytest.raises(KeyError, match=r"param_scheduler\[0\] has no 'type' \(its keys: T_max\)"):
        build_param_schedulers([dict(T_max=3)], make_optimizer())


def test_convert_without_epoch_length_is_named(make_optimizer):
    with pytest.raises(
        ValueError,
        match=r"param_scheduler\[0\] \(type='StepLR'\): "
        r"convert_to_iter_based=True needs epoch_length",
    ):
        build_param_schedulers(
            [dict(type="StepLR", step_size=1, convert_to_iter_based=True)], make_optimizer()
        )


def test_convert_of_an_iteration_based_entry_is_refused(make_optimizer):
    with pytest.raises(ValueError, match=r"param_scheduler \(type='StepLR'\).*by_epoch=False"):
        build_param_schedulers(
            dict(type="StepLR", step_size=1, by_epoch=False, convert_to_iter_based=True),
            make_optimizer(),
            epoch_length=4,
        )


def test_begin_not_before_end_is_named(make_optimizer):
    with pytest.raises(
        ValueError,
        match=r"param_scheduler\[1\] \(type='CosineAnnealingLR'\): "
        r"begin must be smaller than end, but got begin=5, end=5",
    ):
        build_param_schedulers(
            [dict(type="LinearLR", end=5), dict(type="CosineAnnealingLR", begin=5, end=5)],
            make_optimizer(),
        )


def test_constructor_errors_keep_their_type_and_gain_the_entry(make_optimizer):
    with pytest.raises(TypeError, match=r"param_scheduler\[0\] \(type='StepLR'\): .*step_size"):
        build_param_schedulers([dict(type="StepLR")], make_optimizer())
    with pytest.raises(ValueError, match=r"param_scheduler\['g'\]\[0\] .*anneal_strategy"):
        build_param_schedulers(
            dict(g=[dict(type="OneCycleLR", anneal_strategy="cosine", total_steps=5)]),
            _Wrappers(g=make_optimizer()),
        )


def test_entries_that_are_not_configs_are_named(make_optimizer):
    with pytest.raises(TypeError, match=r"param_scheduler\[1\] must be a scheduler config") as info:
        build_param_schedulers([dict(type="StepLR", step_size=1), "StepLR"], make_optimizer())
    assert isinstance(info.value, AssertionError)  # MMEngine's type too


def test_a_scheduler_of_a_child_registry_is_found_in_its_default_scope(make_optimizer):
    children = Registry("parameter scheduler", parent=PARAM_SCHEDULERS, scope="schedtest")

    @children.register_module()
    class HalvingLR(StepLR):
        def __init__(self, optimizer, **kwargs):
            super().__init__(optimizer, step_size=1, gamma=0.5, **kwargs)

    try:
        (scoped,) = build_param_schedulers(
            dict(type="HalvingLR", _scope_="schedtest", convert_to_iter_based=True),
            make_optimizer(),
            epoch_length=2,
        )
        assert isinstance(scoped, HalvingLR) and not scoped.by_epoch
        with DefaultScope.overwrite_default_scope("schedtest"):
            (found,) = build_param_schedulers(dict(type="HalvingLR"), make_optimizer())
        assert isinstance(found, HalvingLR)
        with pytest.raises(KeyError, match="'HalvingLR' is not registered"):
            build_param_schedulers(dict(type="HalvingLR"), make_optimizer())
    finally:
        del PARAM_SCHEDULERS.children["schedtest"]


def test_a_built_scheduler_is_not_shared_by_several_optimizers(make_optimizer):
    wrappers = _Wrappers(generator=make_optimizer(), discriminator=make_optimizer())
    built = StepLR(wrappers["generator"], step_size=1)
    with pytest.raises(ValueError, match="shared by the optimizers 'generator', 'discriminator'"):
        build_param_schedulers([built], wrappers)
    assert build_param_schedulers(dict(generator=built, discriminator=[]), wrappers) == {
        "generator": [built],
        "discriminator": [],
    }
