"""Compose (a dataset's pipeline) against mmengine-lite's: the same transforms give the same
results and text; None stops the pipeline; bad entries name their position and type."""

import pytest
from mmengine.dataset import Compose as MmCompose
from mmengine.registry import TRANSFORMS as MM_TRANSFORMS

from runnerx.data import Compose
from runnerx.registry import TRANSFORMS


class AddOne:
    def __init__(self, key="x"):
        self.key = key

    def __call__(self, data):
        return dict(data, **{self.key: data[self.key] + 1})

    def __repr__(self):
        return f"AddOne(key={self.key!r})"


class DropNegative:
    def __call__(self, data):
        return None if data["x"] < 0 else data


for registry in (TRANSFORMS, MM_TRANSFORMS):
    registry.register_module(name="RxTestAddOne", module=AddOne, force=True)
    registry.register_module(name="RxTestDropNegative", module=DropNegative, force=True)


def double(data):
    return dict(data, x=2 * data["x"])


def pipelines():
    return [
        dict(type="RxTestAddOne"),
        double,
        dict(type="RxTestDropNegative"),
        dict(type="RxTestAddOne", key="y"),
    ]


@pytest.mark.parametrize("x", [3, -4, -1])
def test_same_results_and_text_as_mmengine(x):
    ours, theirs = Compose(pipelines()), MmCompose(pipelines())
    sample = dict(x=x, y=0)
    assert ours(dict(sample)) == theirs(dict(sample))
    expected = None if 2 * (x + 1) < 0 else dict(x=2 * (x + 1), y=1)
    assert ours(dict(sample)) == expected
    assert repr(ours).replace(repr(ours.transforms[2]), "") == repr(theirs).replace(
        repr(theirs.transforms[2]), ""
    )
    assert repr(ours).startswith("Compose(\n    AddOne(key='x')\n    <function double")


def test_none_stops_the_pipeline():
    calls = []
    pipeline = Compose([lambda d: None, calls.append])
    assert pipeline(dict(x=1)) is None
    assert calls == []


def test_empty_pipelines_return_the_sample():
    sample = dict(x=1)
    assert Compose(None)(sample) is sample
    assert Compose([])(sample) is sample


def test_nested_through_the_registry():
    inner = dict(type="Compose", transforms=[dict(type="RxTestAddOne"), dict(type="RxTestAddOne")])
    pipeline = Compose([inner, double])
    assert isinstance(pipeline.transforms[0], Compose)
    assert pipeline(dict(x=1)) == dict(x=6)


@pytest.mark.parametrize(
    "transforms, match",
    [
        ([double, 5], r"pipeline\[1\] must be a transform config dict .* but got int: 5"),
        ([dict(type="RxTestAddOne"), "RxTestAddOne"], r"pipeline\[1\] .* but got str"),
        ([dict(type=dict, x=1)], r"pipeline\[0\] = .* built a dict, which is not callable"),
        (dict(type="RxTestAddOne"), "must be a list of transform config dicts or callables"),
    ],
)
def test_bad_entries_name_position_and_type(transforms, match):
    with pytest.raises(TypeError, match=match):
        Compose(transforms)
    with pytest.raises((TypeError, KeyError)):  # MMEngine refuses them too
        MmCompose(transforms)


def test_unknown_transform_names_the_type():
    with pytest.raises(KeyError, match="RxTestAddOen.*RxTestAddOne"):  # with a close match
        Compose([dict(type="RxTestAddOen")])
