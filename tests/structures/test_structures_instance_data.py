"""InstanceData against mmengine-lite's: lengths, indexing by every kind of index, cat, and
the errors; plus what runnerx does where MMEngine failed."""

import itertools

import mmengine.structures as theirs
import numpy as np
import pytest
import torch

import runnerx.structures as ours
from runnerx.structures import InstanceData


class Polygons:
    """A field type of the user's own: indexable by slices, with ``cat``."""

    def __init__(self, points):
        self.points = list(points)

    def __len__(self):
        return len(self.points)

    def __getitem__(self, item):
        if isinstance(item, int):
            item = slice(item, item + 1 or None)
        return Polygons(self.points[item])

    @staticmethod
    def cat(parts):
        return Polygons(itertools.chain.from_iterable(part.points for part in parts))


def instances(lib, offset=0):
    return lib.InstanceData(
        metainfo=dict(img_shape=(8, 8), ids=[1, 2]),
        labels=torch.arange(4) + offset,
        bboxes=torch.arange(16.0).reshape(4, 4) + offset,
        scores=np.linspace(0, 1, 4) + offset,
        names=["a", "b", "c", "d"],
        text="wxyz",
        flags=(True, False, True, False),
        polygons=Polygons([[0], [1], [2], [3]]),
    )


def plain(value):
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return (type(value).__name__, str(value.dtype), value.tolist())
    if isinstance(value, Polygons):
        return ("Polygons", value.points)
    return value


def view(data) -> dict:
    """An InstanceData's fields and length in a form that compares across the libraries."""
    return dict(
        length=len(data),
        metainfo=sorted((k, plain(v)) for k, v in data.metainfo_items()),
        data=sorted((k, plain(v)) for k, v in data.items()),
    )


def outcome(call):
    try:
        result = call()
    except Exception as error:  # the error is the outcome compared
        return error
    return view(result) if isinstance(result, (ours.InstanceData, theirs.InstanceData)) else result


def assert_same(mine, reference):
    if isinstance(reference, Exception):
        assert isinstance(mine, type(reference)), (mine, reference)
    else:
        assert not isinstance(mine, Exception), mine
        assert plain(mine) == plain(reference)


INDICES = {
    "int": 1,
    "negative int": -1,
    "bool": True,
    "int out of range": 4,
    "negative out of range": -5,
    "slice": slice(1, 3),
    "stepped slice": slice(None, None, -2),
    "list of ints": [3, 0, -1],
    "list of bools": [True, False, False, True],
    "bool array": np.array([False, True, True, False]),
    "int32 array": np.array([2, 1], dtype=np.int32),
    "int64 array": np.array([0, 0, 3]),
    "long tensor": torch.tensor([3, 1]),
    "empty long tensor": torch.tensor([], dtype=torch.long),
    "bool tensor": torch.tensor([True, False, True, True]),
    "uint8 tensor": torch.tensor([1, 0, 1, 0], dtype=torch.uint8),
    "all-false mask": torch.zeros(4, dtype=torch.bool),
    "long out of range": torch.tensor([7]),
    "short mask": torch.tensor([True, False]),
    "2-D tensor": torch.tensor([[0, 1]]),
    "0-d tensor": torch.tensor(1),
    "float tensor": torch.tensor([1.0]),
    "tuple": (0, 1),
    "field name": "labels",
}


@pytest.mark.parametrize("index", INDICES.values(), ids=INDICES.keys())
def test_indexing_matches_mmengine(index):
    mine = outcome(lambda: instances(ours)[index])
    reference = outcome(lambda: instances(theirs)[index])
    assert_same(mine, reference)


def test_indexing_keeps_metainfo_and_the_element_type():
    class DetInstances(InstanceData):
        pass

    data = DetInstances(metainfo=dict(img_shape=(8, 8)), labels=torch.arange(3))
    picked = data[data.labels > 0]
    assert type(picked) is DetInstances and picked.img_shape == (8, 8)
    assert picked.labels.tolist() == [1, 2] and data.labels.tolist() == [0, 1, 2]


def test_indexing_where_mmengine_failed():
    data = instances(ours)
    assert len(data[[]]) == 0 and data[[]].names == [] and data[[]].text == ""
    assert data[torch.tensor([2, 0], dtype=torch.int32)].names == ["c", "a"]
    assert data[np.array([3], dtype=np.int16)].text == "z"


def test_index_errors_say_what_is_wrong():
    data = instances(ours)
    with pytest.raises(IndexError, match="index 4 is out of range for 4 instances"):
        data[4]
    with pytest.raises(AssertionError, match="bool index must have one entry per instance"):
        data[torch.tensor([True])]
    with pytest.raises(TypeError, match="integer or bool tensors, but got torch.float32"):
        data[torch.tensor([1.0])]
    with pytest.raises(
        TypeError, match=r"torch.uint8 tensor: .* pass a bool mask \(mask.bool\(\)\)"
    ):
        data[torch.tensor([1, 0, 1, 0], dtype=torch.uint8)]  # not the positions 1, 0, 1, 0
    assert data[np.array([1, 0], dtype=np.uint8)].names == ["b", "a"]  # numpy: positions
    with pytest.raises(ValueError, match="must be 1-D, but got shape \\(1, 2\\)"):
        data[torch.tensor([[0, 1]])]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        InstanceData(names=["a", "b"])[[7]]  # a list field: slicing would not raise


SETTINGS = {
    "same length": lambda data: setattr(data, "extra", torch.ones(4)),
    "other length": lambda data: setattr(data, "extra", torch.ones(3)),
    "replace with other length": lambda data: setattr(data, "labels", torch.ones(2)),
    "no length": lambda data: setattr(data, "extra", 3),
    "setitem": lambda data: data.__setitem__("extra", [0, 1, 2, 3]),
    "setitem other length": lambda data: data.__setitem__("extra", [0]),
    "metainfo of any length": lambda data: data.set_metainfo(dict(pad=(1, 2, 3))),
    "into an empty one": lambda data: setattr(type(data)(), "x", [1, 2]),
    "to": lambda data: data.to(torch.float64),
    "numpy then to_tensor": lambda data: data.numpy().to_tensor(),
    "new": lambda data: data.new(x=torch.ones(2), y=[1, 2]),
    "new with other lengths": lambda data: data.new(x=torch.ones(2), y=[1, 2, 3]),
}


@pytest.mark.parametrize("setting", SETTINGS.values(), ids=SETTINGS.keys())
def test_setting_fields_matches_mmengine(setting):
    def run(lib):
        data = instances(lib)
        result = outcome(lambda: setting(data))
        return result if isinstance(result, Exception) else (result, view(data))

    assert_same(run(ours), run(theirs))


def test_length_errors_name_the_field_and_the_lengths():
    data = instances(ours)
    with pytest.raises(AssertionError, match="'extra' has length 3, but this InstanceData holds 4"):
        data.extra = torch.ones(3)
    with pytest.raises(TypeError, match="'extra' must have a length.*got int"):
        data["extra"] = 3
    assert len(InstanceData()) == 0 and len(InstanceData(metainfo=dict(a=[1, 2]))) == 0


CATS = {
    "two": lambda lib: [instances(lib), instances(lib, offset=10)],
    "three": lambda lib: [instances(lib), instances(lib, 1)[1:], instances(lib, 2)[[0]]],
    "one": lambda lib: [instances(lib)],
    "none": lambda lib: [],
    "not InstanceData": lambda lib: [instances(lib), lib.BaseDataElement(labels=[1])],
    "other keys": lambda lib: [instances(lib), lib.InstanceData(labels=torch.arange(2))],
    "other metainfo keys": lambda lib: [
        instances(lib),
        instances(lib).new(metainfo=dict(img_shape=(1, 1))),
    ],
    "no cat method": lambda lib: [lib.InstanceData(x={1: 2}), lib.InstanceData(x={3: 4})],
}


@pytest.mark.parametrize("parts", CATS.values(), ids=CATS.keys())
def test_cat_matches_mmengine(parts):
    assert_same(
        outcome(lambda: ours.InstanceData.cat(parts(ours))),
        outcome(lambda: theirs.InstanceData.cat(parts(theirs))),
    )


def test_cat_of_one_is_that_element_and_errors_name_the_difference():
    data = instances(ours)
    assert InstanceData.cat([data]) is data
    with pytest.raises(AssertionError, match="element 1 has \\['labels'\\]"):
        InstanceData.cat([InstanceData(scores=[1]), InstanceData(labels=[1])])
    with pytest.raises(ValueError, match="field 'x' is a dict, which has no `cat`"):
        InstanceData.cat([InstanceData(x={1: 2}), InstanceData(x={3: 4})])
