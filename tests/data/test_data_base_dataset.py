"""BaseDataset against mmengine-lite's: the same annotation files read by the same subclass
written against both give the same data infos, metainfo, lengths, subsets, refetches and
errors; plus lazy initialisation, serialization and safe pickle annotation files."""

import json
import os
import pickle
import sys
import traceback

import mmengine.dataset as mm_dataset
import numpy as np
import pytest
import yaml
from mmengine.registry import TRANSFORMS as MM_TRANSFORMS

from runnerx.data import BaseDataset, build_dataloader
from runnerx.registry import DATASETS, TRANSFORMS

NUM_ENTRIES = 12


class ToyMethods:
    """One MMEngine-style subclass body, mixed into runnerx's and MMEngine's BaseDataset."""

    METAINFO = dict(classes=("cat", "dog", "bird"), dataset_type="toy")
    loads = 0

    def load_data_list(self):
        type(self).loads += 1
        return super().load_data_list()

    def parse_data_info(self, raw_data_info):
        info = super().parse_data_info(raw_data_info)
        info["num_cats"] = len(info["cat_ids"])
        return info

    def filter_data(self):
        if not self.filter_cfg:
            return self.data_list
        return [d for d in self.data_list if d["num_cats"] >= self.filter_cfg["min_cats"]]


class RxToy(ToyMethods, BaseDataset):
    pass


class MmToy(ToyMethods, mm_dataset.BaseDataset):
    pass


DATASETS.register_module(name="RxTestToyDataset", module=RxToy, force=True)


class DropIf:
    """Returns None for the listed sample indices; counts its calls."""

    def __init__(self, drop=()):
        self.drop = set(drop)
        self.calls = 0

    def __call__(self, info):
        self.calls += 1
        return None if info["sample_idx"] in self.drop else info


class TakePath:
    def __call__(self, info):
        return dict(path=info["img_path"], idx=info["sample_idx"])


class FailOn:
    """Raises for one sample index, as a transform reading a corrupt file would."""

    def __init__(self, index):
        self.index = index

    def __call__(self, info):
        if info["sample_idx"] == self.index:
            raise ValueError("corrupt sample")
        return dict(idx=info["sample_idx"])


for registry in (TRANSFORMS, MM_TRANSFORMS):
    registry.register_module(name="RxTestDropIf", module=DropIf, force=True)
    registry.register_module(name="RxTestTakePath", module=TakePath, force=True)
TRANSFORMS.register_module(name="RxTestFailOn", module=FailOn, force=True)


def entries():
    cat_ids = [[0], [1], [0, 2], [], [0], [2], [0], [1, 0], [0], [], [2], [0]]
    return [
        dict(img_path=f"{i:02d}.jpg", cat_ids=cat_ids[i], score=i / 4) for i in range(NUM_ENTRIES)
    ]


@pytest.fixture
def ann_dir(tmp_path):
    annotations = dict(metainfo=dict(dataset_type="from_file", version=2), data_list=entries())
    (tmp_path / "ann.json").write_text(json.dumps(annotations))
    (tmp_path / "ann.yaml").write_text(yaml.safe_dump(annotations))
    boxed = [dict(entry, box=np.arange(4.0) + i) for i, entry in enumerate(entries())]
    pickled = dict(annotations, data_list=boxed)
    (tmp_path / "ann.pkl").write_bytes(pickle.dumps(pickled, protocol=2))  # as mmengine.dump
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    return tmp_path


def infos(dataset):
    return [plain(dataset.get_data_info(i)) for i in range(len(dataset))]


def plain(value):
    """numpy arrays as lists, so infos compare with ==."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value.tolist() if isinstance(value, np.ndarray) else value


def both(ann_dir, **kwargs):
    """The runnerx and the MMEngine dataset, built alike (``{dir}`` in str values is ann_dir)."""
    kwargs = {k: v.format(dir=ann_dir) if isinstance(v, str) else v for k, v in kwargs.items()}
    if isinstance(kwargs.get("metainfo"), dict):
        kwargs["metainfo"] = {k: v.format(dir=ann_dir) for k, v in kwargs["metainfo"].items()}
    return RxToy(**kwargs), MmToy(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(ann_file="{dir}/ann.json"),
        dict(ann_file="{dir}/ann.yaml", serialize_data=False),
        dict(ann_file="{dir}/ann.pkl"),
        dict(ann_file="ann.json", data_root="{dir}", data_prefix=dict(img_path="images/")),
        dict(ann_file="ann.json", data_root="{dir}", data_prefix=dict(img_path="/abs/images")),
        dict(ann_file="{dir}/ann.json", data_root="/elsewhere", data_prefix=dict()),
        dict(ann_file="{dir}/ann.json", indices=5),
        dict(ann_file="{dir}/ann.json", indices=-4, serialize_data=False),
        dict(ann_file="{dir}/ann.json", indices=[0, 3, -1, 3]),
        dict(ann_file="{dir}/ann.json", indices=100),
        dict(ann_file="{dir}/ann.json", filter_cfg=dict(min_cats=1)),
        dict(ann_file="{dir}/ann.json", lazy_init=True),
        dict(ann_file="{dir}/ann.json", metainfo=dict(classes="{dir}/classes.txt", version="v3")),
    ],
)
def test_same_data_infos_and_metainfo_as_mmengine(ann_dir, kwargs):
    ours, theirs = both(ann_dir, **kwargs)
    assert len(ours) == len(theirs) > 0
    assert infos(ours) == infos(theirs)
    assert plain(ours.get_data_info(-1)) == plain(theirs.get_data_info(-1))
    assert ours.metainfo == theirs.metainfo
    assert (ours.ann_file, ours.data_prefix) == (theirs.ann_file, theirs.data_prefix)


def test_metainfo_priority_and_copies(ann_dir):
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"), metainfo=dict(dataset_type="mine"))
    # argument > METAINFO > annotation file, which only fills the keys still missing
    assert dataset.metainfo == dict(classes=("cat", "dog", "bird"), dataset_type="mine", version=2)
    dataset.metainfo["classes"] = ()
    assert dataset.metainfo["classes"] == ("cat", "dog", "bird")
    assert RxToy.METAINFO["dataset_type"] == "toy"  # the class attribute is untouched
    read = RxToy(
        ann_file=str(ann_dir / "ann.json"), metainfo=dict(classes=str(ann_dir / "classes.txt"))
    )
    assert read.metainfo["classes"] == ["cat", "dog"]


@pytest.mark.parametrize("indices", [3, -3, [4, 0, -1], [], 0])
@pytest.mark.parametrize("serialize_data", [True, False])
def test_subsets_as_mmengine(ann_dir, indices, serialize_data):
    ours, theirs = both(ann_dir, ann_file="{dir}/ann.json", serialize_data=serialize_data)
    subset, their_subset = ours.get_subset(indices), theirs.get_subset(indices)
    assert infos(subset) == infos(their_subset)
    assert len(ours) == NUM_ENTRIES  # get_subset leaves the dataset as it was
    ours.get_subset_(indices)
    theirs.get_subset_(indices)
    assert infos(ours) == infos(theirs) == infos(subset)


@pytest.mark.parametrize("indices", [NUM_ENTRIES, -NUM_ENTRIES])
def test_whole_length_subsets_also_when_serialized(ann_dir, indices):
    # MMEngine's serialized path fails on these (an assertion, an IndexError); its plain one
    # keeps every entry, and so do we in both
    theirs = MmToy(ann_file=str(ann_dir / "ann.json"), serialize_data=False)
    for serialize_data in (True, False):
        ours = RxToy(ann_file=str(ann_dir / "ann.json"), serialize_data=serialize_data)
        assert infos(ours.get_subset(indices)) == infos(theirs.get_subset(indices))


def test_indices_past_what_filter_data_left_name_both_counts(ann_dir):
    kwargs = dict(ann_file=str(ann_dir / "ann.json"), filter_cfg=dict(min_cats=1))
    assert len(RxToy(**kwargs)) == 10  # two entries have no categories
    with pytest.raises(
        IndexError,
        match=r"^RxToy: indices=\[11, 1\] picks index 11, but filter_data left 10 of the 12 "
        r"data infos loaded \(indices count the data infos left\)$",
    ):
        RxToy(**kwargs, indices=[11, 1])


@pytest.mark.skipif(sys.version_info < (3, 11), reason="BaseException.add_note is 3.11+")
@pytest.mark.parametrize("num_workers", [0, 2])
def test_an_error_while_reading_a_sample_names_the_sample(ann_dir, num_workers):
    dataset = dict(
        type="RxTestToyDataset",
        ann_file=str(ann_dir / "ann.json"),
        pipeline=[dict(type="RxTestFailOn", index=5)],
    )
    sampler = dict(type="DefaultSampler", shuffle=False)
    loader = build_dataloader(
        dict(dataset=dataset, sampler=sampler, batch_size=2, num_workers=num_workers)
    )
    batches = iter(loader)
    with pytest.raises(ValueError, match="corrupt sample") as info:
        list(batches)
    if num_workers:  # now: left to the garbage collector, each worker stalls it for 5 s
        batches._shutdown_workers()
    shown = "".join(traceback.format_exception(info.value))  # as Python prints it
    assert (
        "ValueError: corrupt sample\nwhile reading sample 5 of RxToy (img_path='05.jpg')" in shown
    )
    if num_workers == 0:
        assert str(info.value) == "corrupt sample"  # the original message, the note apart


@pytest.mark.skipif(sys.version_info < (3, 11), reason="BaseException.add_note is 3.11+")
def test_a_sample_that_cannot_be_read_at_all_is_named_without_paths(ann_dir):
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"), data_prefix=dict())
    with pytest.raises(IndexError, match="index 12 is out of range") as info:
        dataset[12]
    assert info.value.__notes__ == ["while reading sample 12 of RxToy"]


def test_bad_subset_indices(ann_dir):
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"))
    with pytest.raises(IndexError, match="index 12 is out of range for a dataset of 12"):
        dataset.get_subset([0, 12])
    with pytest.raises(TypeError, match="indices must be an int or a sequence of ints"):
        dataset.get_subset(1.5)


@pytest.mark.parametrize(
    "content, error, match",
    [
        ([1, 2], TypeError, "holds a list; it must hold dict\\(metainfo="),
        (dict(data_list=[]), ValueError, "has no 'metainfo' key"),
        (dict(metainfo={}), ValueError, "has no 'data_list' key"),
        (dict(metainfo=[], data_list=[]), TypeError, "'metainfo' must be a dict"),
        (
            dict(metainfo={}, data_list=[dict(x=1)]),
            ValueError,
            "data_prefix has the key 'img_path'",
        ),
        (dict(metainfo={}, data_list=dict(a=1)), TypeError, "'data_list' must be a list of dicts"),
    ],
)
def test_bad_annotation_files_fail_like_mmengine(tmp_path, content, error, match):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(content))
    with pytest.raises(Exception):  # noqa: B017  MMEngine's error types vary (assertions too)
        MmToy(ann_file=str(path))
    with pytest.raises(error, match=match) as caught:
        RxToy(ann_file=str(path))
    assert str(path) in str(caught.value)


def test_missing_or_unsupported_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.json"):
        RxToy(ann_file=str(tmp_path / "nothere.json"))
    (tmp_path / "ann.txt").write_text("x")
    with pytest.raises(TypeError, match="unsupported format"):
        RxToy(ann_file=str(tmp_path / "ann.txt"))
    with pytest.raises(TypeError, match="Unsupported format"):
        MmToy(ann_file=str(tmp_path / "ann.txt"))
    with pytest.raises(ValueError, match="ann_file is empty"):
        RxToy()


class RunsCode:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_pickle_annotation_files_do_not_run_code(tmp_path, capfd):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(dict(metainfo={}, data_list=[RunsCode()])))
    with pytest.raises(pickle.UnpicklingError, match=f"{path}.*holds a pickled .*system"):
        RxToy(ann_file=str(path))
    assert "pwned" not in capfd.readouterr().out


@pytest.mark.parametrize("test_mode", [False, True])
def test_pipeline_and_refetch_as_mmengine(ann_dir, test_mode):
    drop = [1, 4, 5]
    pipeline = [dict(type="RxTestDropIf", drop=drop), dict(type="RxTestTakePath")]
    ours, theirs = both(ann_dir, ann_file="{dir}/ann.json", pipeline=pipeline, test_mode=test_mode)
    for index in range(NUM_ENTRIES):
        np.random.seed(index)
        if index in drop and test_mode:
            with pytest.raises(RuntimeError, match="returned None for index"):
                ours[index]
            with pytest.raises(Exception, match="should not get `None`"):
                theirs[index]
            continue
        mine = ours[index]
        np.random.seed(index)
        assert mine == theirs[index]
        assert (mine["idx"] not in drop) and (mine["idx"] == index) == (index not in drop)


def test_refetch_gives_up_after_max_refetch(ann_dir):
    pipeline = [dict(type="RxTestDropIf", drop=range(NUM_ENTRIES))]
    ours, theirs = both(ann_dir, ann_file="{dir}/ann.json", pipeline=pipeline, max_refetch=3)
    with pytest.raises(RuntimeError, match="max_refetch=3"):
        ours[0]
    with pytest.raises(Exception, match="Cannot find valid image"):
        theirs[0]
    assert ours.pipeline.transforms[0].calls == theirs.pipeline.transforms[0].calls == 4


def test_lazy_init_loads_once_when_first_needed(ann_dir):
    RxToy.loads = 0
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"), lazy_init=True)
    assert not dataset._fully_initialized and RxToy.loads == 0
    assert dataset.metainfo["dataset_type"] == "toy"  # no load for the class's metainfo
    assert len(dataset) == NUM_ENTRIES and dataset._fully_initialized
    dataset.get_data_info(0)
    dataset.full_init()
    assert RxToy.loads == 1
    with pytest.warns(UserWarning, match="before full_init"):
        RxToy(ann_file=str(ann_dir / "ann.json"), lazy_init=True)[0]


def test_build_dataloader_initialises_a_lazy_dataset(ann_dir):
    dataset = dict(
        type="RxTestToyDataset",
        ann_file=str(ann_dir / "ann.json"),
        pipeline=[dict(type="RxTestTakePath")],
        lazy_init=True,
    )
    sampler = dict(type="DefaultSampler", shuffle=False)
    loader = build_dataloader(dict(dataset=dataset, sampler=sampler, batch_size=5))
    assert loader.dataset._fully_initialized
    batches = list(loader)
    assert [batch["idx"] for batch in batches] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
    assert batches[2]["path"] == ["10.jpg", "11.jpg"]


@pytest.mark.parametrize("serialize_data", [True, False])
def test_data_infos_are_copies(ann_dir, serialize_data):
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"), serialize_data=serialize_data)
    dataset.get_data_info(2)["cat_ids"].append(9)
    assert dataset.get_data_info(2)["cat_ids"] == [0, 2]
    assert dataset.get_data_info(-1)["sample_idx"] == NUM_ENTRIES - 1


def test_serialized_dataset_round_trips_and_pickles_small(ann_dir):
    serialized = RxToy(ann_file=str(ann_dir / "ann.pkl"))
    unserialized = RxToy(ann_file=str(ann_dir / "ann.pkl"), serialize_data=False)
    assert infos(serialized) == infos(unserialized)
    assert serialized.data_list == [] and isinstance(serialized.data_bytes, bytes)
    restored = pickle.loads(pickle.dumps(serialized))
    assert infos(restored) == infos(serialized)
    # the pickle is the buffer, its 8-byte ends and the dataset's few other attributes
    overhead = len(pickle.dumps(serialized)) - len(serialized.data_bytes) - 8 * NUM_ENTRIES
    assert 0 < overhead < 1500


def test_get_cat_ids_must_be_implemented(ann_dir):
    dataset = RxToy(ann_file=str(ann_dir / "ann.json"))
    with pytest.raises(NotImplementedError, match="RxToy must implement get_cat_ids"):
        dataset.get_cat_ids(0)


def test_bad_arguments_name_the_key():
    with pytest.raises(TypeError, match="data_prefix\\['img_path'\\] must be a str"):
        BaseDataset(data_prefix=dict(img_path=3), lazy_init=True)
    with pytest.raises(TypeError, match="metainfo must be a dict"):
        BaseDataset(metainfo=["cat"], lazy_init=True)
    for max_refetch in (-1, 1.5, True):
        with pytest.raises(ValueError, match=f"max_refetch must be an int >= 0.*{max_refetch}"):
            BaseDataset(max_refetch=max_refetch, lazy_init=True)
    assert BaseDataset(max_refetch=np.int64(3), lazy_init=True).max_refetch == 3  # numpy's too
    with pytest.raises(TypeError, match="pipeline\\[1\\] must be a transform config dict"):
        BaseDataset(pipeline=[TakePath(), 3], lazy_init=True)
