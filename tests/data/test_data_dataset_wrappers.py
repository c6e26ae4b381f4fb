"""ConcatDataset, RepeatDataset and ClassBalancedDataset against mmengine-lite's: the same
configs give the same lengths, data infos, samples and repeat counts, and the same errors."""

import json
import random

import mmengine.dataset as mm_dataset
import numpy as np
import pytest
from mmengine.registry import DATASETS as MM_DATASETS

from runnerx.data import (
    BaseDataset,
    ClassBalancedDataset,
    ConcatDataset,
    DigitsDataset,
    RepeatDataset,
    build_dataloader,
)
from runnerx.registry import DATASETS


class CatsMethods:
    METAINFO = dict(classes=tuple("abcdef"))

    def get_cat_ids(self, idx):
        return self.get_data_info(idx)["cat_ids"]


class RxCats(CatsMethods, BaseDataset):
    pass


class MmCats(CatsMethods, mm_dataset.BaseDataset):
    pass


DATASETS.register_module(name="RxTestCats", module=RxCats, force=True)
MM_DATASETS.register_module(name="RxTestCats", module=MmCats, force=True)


def write_cats(path, cat_ids):
    data_list = [dict(img_path=f"{i}.png", cat_ids=ids) for i, ids in enumerate(cat_ids)]
    path.write_text(json.dumps(dict(metainfo=dict(source=path.name), data_list=data_list)))
    return str(path)


def skewed_cat_ids(seed, num_samples=40):
    """Category 0 is common, 5 is rare; some samples have none."""
    rng = random.Random(seed)
    weights = [20, 8, 4, 2, 1, 0.5]
    return [
        sorted(set(rng.choices(range(6), weights, k=rng.randint(0, 3)))) for _ in range(num_samples)
    ]


# f(c) = 1/16, 2/16, 4/16, 8/16: thresholds make sqrt(t / f) land exactly on whole numbers
EXACT_CAT_IDS = [[0]] * 8 + [[1]] * 4 + [[2]] * 2 + [[3]] + [[0, 3]]


def build_both(cfg):
    return DATASETS.build(cfg), MM_DATASETS.build(cfg)


def contents(dataset):
    indices = range(len(dataset))  # not `for d in dataset`: MMEngine's RepeatDataset never ends
    return [dataset.get_data_info(i) for i in indices], [dataset[i] for i in indices]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("oversample_thr", [0.05, 0.1, 0.3, 1.0])
def test_class_balanced_repeat_counts_as_mmengine(tmp_path, seed, oversample_thr):
    cat_ids = skewed_cat_ids(seed)
    inner = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "cats.json", cat_ids))
    cfg = dict(type="ClassBalancedDataset", oversample_thr=oversample_thr, dataset=inner)
    ours, theirs = build_both(cfg)
    assert ours.repeat_indices == theirs.repeat_indices
    assert contents(ours) == contents(theirs)
    assert [ours.get_cat_ids(i) for i in range(len(ours))] == [
        theirs.get_cat_ids(i) for i in range(len(theirs))
    ]


@pytest.mark.parametrize("oversample_thr", [1 / 16, 4 / 16, 1.0, 0.5])
def test_class_balanced_rounds_exact_factors_as_mmengine(tmp_path, oversample_thr):
    inner = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "cats.json", EXACT_CAT_IDS))
    cfg = dict(type="ClassBalancedDataset", oversample_thr=oversample_thr, dataset=inner)
    ours, theirs = build_both(cfg)
    assert ours.repeat_indices == theirs.repeat_indices
    if oversample_thr == 1.0:  # f = 1/2 (category 0), 1/4, 1/8, 1/8: factors 2, 2, 3, 3
        assert [ours.repeat_indices.count(i) for i in (0, 8, 12, 14, 15)] == [2, 2, 3, 3, 3]


def test_repeat_and_concat_as_mmengine(tmp_path):
    first = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "a.json", skewed_cat_ids(0, 7)))
    second = dict(first, indices=[4, 0, 2], serialize_data=False)
    repeated = dict(type="RepeatDataset", times=3, dataset=first)
    ours, theirs = build_both(repeated)
    assert len(ours) == 21 and contents(ours) == contents(theirs)
    assert ours.metainfo == theirs.metainfo
    assert ours[-1] == theirs[-1] == ours[20]
    with pytest.raises(IndexError, match="index 21 is out of range"):  # MMEngine: ours[0]
        ours[21]
    concat = dict(type="ConcatDataset", datasets=[repeated, second], ignore_keys="source")
    ours, theirs = build_both(concat)
    assert len(ours) == 24 and contents(ours) == contents(theirs)
    assert ours.get_data_info(-1) == theirs.get_data_info(-1) == ours.get_data_info(23)
    assert ours[22] == theirs[22]
    with pytest.raises(IndexError, match="index 24 is out of range for a dataset of 24"):
        ours[24]


def test_lazy_wrappers_are_initialised_by_build_dataloader(tmp_path):
    inner = dict(
        type="RxTestCats",
        ann_file=write_cats(tmp_path / "cats.json", skewed_cat_ids(0, 10)),
        pipeline=[lambda info: info["img_path"]],
        lazy_init=True,
    )
    for cfg, length in [
        (dict(type="RepeatDataset", times=3, dataset=inner, lazy_init=True), 30),
        (dict(type="ConcatDataset", datasets=[inner, inner], lazy_init=True), 20),
        (dict(type="ClassBalancedDataset", oversample_thr=0.2, dataset=inner, lazy_init=True), 0),
    ]:
        assert not DATASETS.build(cfg)._fully_initialized
        sampler = dict(type="DefaultSampler", shuffle=False)
        loader = build_dataloader(dict(dataset=cfg, sampler=sampler, batch_size=4))
        dataset = loader.dataset
        assert dataset._fully_initialized
        assert len(dataset) == (length or len(MM_DATASETS.build(cfg)))
        assert sum(len(batch) for batch in loader) == len(dataset)


def test_reading_a_lazy_wrapper_initialises_it_with_a_warning(tmp_path):
    inner = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "c.json", [[0], [1]]))
    dataset = RepeatDataset(inner, times=2, lazy_init=True)
    with pytest.warns(UserWarning, match="RepeatDataset is read before full_init"):
        assert dataset[3]["img_path"] == "1.png"
    lazy = RepeatDataset(inner, times=2, lazy_init=True)
    assert len(lazy) == 4 and lazy._fully_initialized  # methods that need it initialise it


@pytest.mark.parametrize(
    "second_metainfo, error, match",
    [
        (
            dict(classes=tuple("abcdeX")),
            ValueError,
            r"datasets\[1\].metainfo\['classes'\] = .* dif",
        ),
        (dict(classes=list("abcdef")), TypeError, r"datasets\[1\].metainfo\['classes'\] is a list"),
        (dict(extra=1), ValueError, r"datasets\[0\].metainfo has no 'extra', which datasets\[1\]"),
    ],
)
def test_concat_metainfo_must_agree(tmp_path, second_metainfo, error, match):
    inner = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "c.json", [[0]]))
    cfg = dict(type="ConcatDataset", datasets=[inner, dict(inner, metainfo=second_metainfo)])
    with pytest.raises(error, match=match):
        DATASETS.build(cfg)
    with pytest.raises(error):
        MM_DATASETS.build(cfg)
    ignored = dict(cfg, ignore_keys=list(second_metainfo))
    assert len(DATASETS.build(ignored)) == len(MM_DATASETS.build(ignored)) == 2


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((2, 3), (3, 3)), ((1,), (3,))])
def test_concat_metainfo_arrays_of_other_shapes_differ(tmp_path, shapes):
    ann_file = write_cats(tmp_path / "c.json", [[0]])
    first, second = (RxCats(ann_file, metainfo=dict(palette=np.zeros(s))) for s in shapes)
    with pytest.raises(
        ValueError, match=r"(?s)datasets\[1\].metainfo\['palette'\] = array.* differs .*ignore_keys"
    ):
        ConcatDataset([first, second])
    assert len(ConcatDataset([first, second], ignore_keys="palette")) == 2


@pytest.mark.parametrize("wrapper", ["ConcatDataset", "RepeatDataset", "ClassBalancedDataset"])
def test_wrappers_have_no_subsets(tmp_path, wrapper):
    inner = dict(type="RxTestCats", ann_file=write_cats(tmp_path / "c.json", [[0], [1]]))
    args = dict(
        ConcatDataset=dict(datasets=[inner]),
        RepeatDataset=dict(dataset=inner, times=2),
        ClassBalancedDataset=dict(dataset=inner, oversample_thr=0.1),
    )[wrapper]
    for dataset in build_both(dict(type=wrapper, **args)):
        for method in (dataset.get_subset, dataset.get_subset_):
            with pytest.raises(NotImplementedError, match=f"{wrapper}.*wrapped dataset"):
                method(1)


def test_wrappers_take_any_map_style_dataset():
    val = DigitsDataset("val")
    repeated = RepeatDataset(val, times=2)
    assert len(repeated) == 2 * len(val)
    assert repeated[len(val) + 3]["data_samples"] == val[3]["data_samples"]
    concat = ConcatDataset([val, dict(type="DigitsDataset", split="train")])
    assert len(concat) == 1797 and concat.metainfo == val.metainfo


def test_bad_arguments_name_the_key():
    with pytest.raises(TypeError, match="RepeatDataset dataset must be a dataset or a config"):
        RepeatDataset(5, times=2)
    with pytest.raises(ValueError, match="RepeatDataset times must be a positive int"):
        RepeatDataset(DigitsDataset("val"), times=0)
    with pytest.raises(TypeError, match=r"ConcatDataset datasets\[1\] must be a dataset"):
        ConcatDataset([DigitsDataset("val"), "train"])
    with pytest.raises(ValueError, match=r"datasets\[1\] \(a list\) has no metainfo, but "):
        ConcatDataset([DigitsDataset("val"), [1, 2, 3]])
    with pytest.raises(ValueError, match="ConcatDataset datasets is empty"):
        ConcatDataset([])
    with pytest.raises(TypeError, match="ignore_keys must be a str or a list of str"):
        ConcatDataset([DigitsDataset("val")], ignore_keys=3)
    with pytest.raises(NotImplementedError, match="must implement get_cat_ids"):
        ClassBalancedDataset(dict(type="DigitsDataset"), oversample_thr=0.1)
