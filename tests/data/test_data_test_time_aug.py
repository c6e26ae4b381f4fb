"""TestTimeAug: one view per combination of transforms (mmcv's order), packed as a dict of
lists, each view made from its own copy of the sample."""

import pytest

from runnerx.data import pseudo_collate
from runnerx.registry import TRANSFORMS


def tag(name):
    """A transform that appends ``name`` to the sample's ``steps``."""

    def transform(sample):
        sample["steps"].append(name)
        return sample

    transform.__name__ = f"tag_{name}"
    return transform


def test_views_are_the_product_of_the_lists_first_list_slowest():
    aug = TRANSFORMS.build(
        dict(
            type="TestTimeAug",
            transforms=[[tag("a1"), tag("a2")], [tag("b1"), tag("b2")], [tag("c")]],
        )
    )
    sample = dict(steps=[], label=3)
    views = aug(sample)
    assert views == dict(
        steps=[
            ["a1", "b1", "c"],
            ["a1", "b2", "c"],
            ["a2", "b1", "c"],
            ["a2", "b2", "c"],
        ],
        label=[3, 3, 3, 3],
    )
    assert sample == dict(steps=[], label=3)  # every view worked on a copy


def test_config_entries_are_built_and_batches_collate_view_by_view():
    from tests.model.tta_parts import TtaVectors  # registers TtaReverse and TtaPack

    pipeline = [
        dict(
            type="TestTimeAug",
            transforms=[
                [dict(type="TtaReverse", reverse=True), dict(type="TtaReverse", reverse=False)],
                [dict(type="TtaPack")],
            ],
        )
    ]
    dataset = TtaVectors(pipeline=pipeline)
    sample = dataset[4]
    assert list(sample) == ["inputs", "data_samples"]
    reversed_view, plain_view = sample["inputs"]
    assert reversed_view.flip(0).tolist() == plain_view.tolist()
    assert [s.reversed for s in sample["data_samples"]] == [True, False]

    batch = pseudo_collate([dataset[4], dataset[5], dataset[6]])
    assert len(batch["inputs"]) == 2  # views, each a list over the samples
    assert [len(view) for view in batch["inputs"]] == [3, 3]
    assert [s.index for s in batch["data_samples"][1]] == [4, 5, 6]
    assert all(s.reversed for s in batch["data_samples"][0])


def test_a_view_that_comes_out_none_is_an_error():
    aug = TRANSFORMS.build(dict(type="TestTimeAug", transforms=[[tag("a"), lambda s: None]]))
    with pytest.raises(
        ValueError, match=r"TestTimeAug: view 2 of 2 \(<function .*lambda.*\) is None"
    ):
        aug(dict(steps=[]))


@pytest.mark.parametrize(
    "transforms",
    [dict(type="TtaPack"), [dict(type="TtaPack")], [[tag("a")], []], "TtaPack"],
)
def test_transforms_must_be_a_list_of_non_empty_lists(transforms):
    with pytest.raises(TypeError, match="list of non-empty lists of transforms"):
        TRANSFORMS.build(dict(type="TestTimeAug", transforms=transforms))


def test_a_bad_entry_is_named_by_its_place():
    with pytest.raises(TypeError, match=r"TestTimeAug transforms\[1\]\[0\]: .* got int"):
        TRANSFORMS.build(dict(type="TestTimeAug", transforms=[[tag("a")], [3]]))
