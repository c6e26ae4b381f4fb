"""Downstream datasets written against MMEngine's BaseDataset internals (mmdet's, mmyolo's
``full_init``; ``get_data_info`` bodies copied from MMEngine) run on runnerx's unchanged and
give what they give on MMEngine's."""

import json
import pickle

import mmengine.dataset as mm_dataset
import numpy as np
import pytest

from runnerx.data import BaseDataset

NUM_ENTRIES = 8


class PortedMethods:
    """mmdet's BaseDetDataset.full_init and MMEngine's own get_data_info body, verbatim in
    what they call; mixed into runnerx's and MMEngine's BaseDataset."""

    def filter_data(self):
        return [info for info in self.data_list if info["keep"]]

    def full_init(self):
        if self._fully_initialized:
            return
        self.data_list = self.load_data_list()
        self.data_list = self.filter_data()
        if self._indices is not None:
            self.data_list = self._get_unserialized_subset(self._indices)
        if self.serialize_data:
            self.data_bytes, self.data_address = self._serialize_data()
        self._fully_initialized = True

    def get_data_info(self, idx):
        if not self.serialize_data:
            return super().get_data_info(idx)
        start_addr = 0 if idx == 0 else self.data_address[idx - 1].item()
        end_addr = self.data_address[idx].item()
        info = pickle.loads(memoryview(self.data_bytes[start_addr:end_addr]))
        info["sample_idx"] = idx
        return info


class RxPorted(PortedMethods, BaseDataset):
    pass


class MmPorted(PortedMethods, mm_dataset.BaseDataset):
    pass


@pytest.fixture
def ann_file(tmp_path):
    data_list = [dict(img_path=f"{i}.jpg", keep=i != 2) for i in range(NUM_ENTRIES)]
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(dict(metainfo=dict(classes=["a"]), data_list=data_list)))
    return str(path)


def infos(dataset):
    return [dataset.get_data_info(i) for i in range(len(dataset))]


@pytest.mark.parametrize("serialize_data", [True, False])
@pytest.mark.parametrize("indices", [None, [4, 0, 2], 3])
def test_mmdet_style_full_init_and_get_data_info_run_as_on_mmengine(
    ann_file, serialize_data, indices
):
    kwargs = dict(ann_file=ann_file, serialize_data=serialize_data, indices=indices)
    ours, theirs = RxPorted(**kwargs), MmPorted(**kwargs)
    assert len(ours) == len(theirs) == (NUM_ENTRIES - 1 if indices is None else 3)
    assert infos(ours) == infos(theirs)
    assert ours.data_list == theirs.data_list  # emptied by _serialize_data when serialized
    for subset_indices in ([2, 0], 2, -2):  # a list, a run from the start, one to the end
        assert infos(ours.get_subset(subset_indices)) == infos(theirs.get_subset(subset_indices))


def test_serialized_layout_is_mmengines(ann_file):
    ours = BaseDataset(ann_file=ann_file)
    theirs = mm_dataset.BaseDataset(ann_file=ann_file)
    assert ours.data_address.dtype == theirs.data_address.dtype == np.int64
    assert isinstance(ours.data_address, np.ndarray)
    for subset in (ours.get_subset([3, 1]), ours.get_subset(-3)):
        assert isinstance(subset.data_address, np.ndarray) and subset.data_address.dtype == np.int64
        assert subset.data_address[-1].item() == len(subset.data_bytes)
    assert ours._get_serialized_subset(2)[1].tolist() == ours.data_address[:2].tolist()
    assert len(ours._get_unserialized_subset(2)) == 0  # the data infos are serialized


def test_copy_without_annotation_takes_mmengines_memo(ann_file):
    dataset = BaseDataset(ann_file=ann_file)
    memo = {}
    copied = dataset._copy_without_annotation(memo=memo)
    assert memo[id(dataset)] is copied
    assert memo[id(dataset._metainfo)] == dataset.metainfo  # deep copies go through memo
    assert len(copied) == 0 and copied.data_list == [] and copied.data_bytes == b""
    assert dataset._copy_without_annotation() is not copied  # without memo: a fresh one
