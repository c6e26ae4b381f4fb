"""BaseDataElement against mmengine-lite's (same operations in, same fields, values and errors
out), plus what runnerx adds: ordered fields, clear errors, property fields' pop."""

import copy
import pickle
import re

import mmengine.structures as theirs
import numpy as np
import pytest
import torch

import runnerx.structures as ours
from runnerx.structures import BaseDataElement

LIBS = pytest.mark.parametrize("lib", [ours, theirs], ids=["runnerx", "mmengine"])


def element(lib):
    return lib.BaseDataElement(
        metainfo=dict(img_shape=(2, 3), sample_idx=7, tags=["a"]),
        pred_score=torch.tensor([0.2, 0.8]),
        gt_label=torch.tensor(1),
        name="cat",
    )


def state(el) -> dict:
    """What a user sees of an element, in a form that compares across the two libraries."""

    def plain(value):
        if isinstance(value, torch.Tensor):
            return ("tensor", value.dtype, value.tolist())
        if isinstance(value, np.ndarray):
            return ("array", str(value.dtype), value.tolist())
        if isinstance(value, (ours.BaseDataElement, theirs.BaseDataElement)):
            return (type(value).__name__, state(value))
        return value

    return dict(
        metainfo={k: plain(v) for k, v in sorted(el.metainfo_items())},
        data={k: plain(v) for k, v in sorted(el.items())},
        keys=sorted(el.keys()),
        metainfo_keys=sorted(el.metainfo_keys()),
        all_keys=sorted(el.all_keys()),
        values=sorted(map(repr, map(plain, el.values()))),
        all_values=sorted(map(repr, map(plain, el.all_values()))),
        metainfo_property={k: plain(v) for k, v in el.metainfo.items()},
    )


def outcome(lib, operation):
    """(result, state) after ``operation(lib, element)``, or the exception it raised."""
    el = element(lib)
    try:
        result = operation(lib, el)
    except Exception as error:  # the error is the outcome compared
        return error
    if isinstance(result, torch.Tensor):
        result = result.tolist()
    return result, state(el)


def setattr_op(name, value):
    return lambda lib, el: setattr(el, name, value)


OPERATIONS = {
    "set a new data field": setattr_op("pred_label", torch.tensor(1)),
    "replace a data field": setattr_op("gt_label", torch.tensor(0)),
    "set a metainfo key as data": setattr_op("img_shape", (4, 4)),
    "set a data key as metainfo": lambda lib, el: el.set_metainfo(dict(gt_label=1)),
    "change metainfo": lambda lib, el: el.set_metainfo(dict(img_shape=(5, 5), new=1)),
    "metainfo not a dict": lambda lib, el: el.set_metainfo([("a", 1)]),
    "set_data": lambda lib, el: el.set_data(dict(extra=3, name="dog")),
    "set_data not a dict": lambda lib, el: el.set_data([1]),
    "replace _data_fields": setattr_op("_data_fields", set()),
    "replace _metainfo_fields": setattr_op("_metainfo_fields", set()),
    "delete _data_fields": lambda lib, el: delattr(el, "_data_fields"),
    "delete a data field": lambda lib, el: delattr(el, "pred_score"),
    "delete a metainfo field": lambda lib, el: delattr(el, "img_shape"),
    "delete a missing field": lambda lib, el: delattr(el, "missing"),
    "del item": lambda lib, el: el.__delitem__("name"),
    "read a missing field": lambda lib, el: el.missing,
    "pop data": lambda lib, el: el.pop("pred_score"),
    "pop metainfo": lambda lib, el: el.pop("sample_idx"),
    "pop missing": lambda lib, el: el.pop("missing"),
    "pop missing with default": lambda lib, el: el.pop("missing", 5),
    "get": lambda lib, el: (el.get("sample_idx"), el.get("name"), el.get("missing", 9)),
    "contains": lambda lib, el: ["img_shape" in el, "name" in el, "missing" in el],
    "set_field with dtype": lambda lib, el: el.set_field(3, "count", dtype=int),
    "set_field wrong dtype": lambda lib, el: el.set_field(3, "count", dtype=str),
    "set_field bad kind": lambda lib, el: el.set_field(3, "count", field_type="other"),
    "set_field metainfo": lambda lib, el: el.set_field(3, "count", field_type="metainfo"),
    "update": lambda lib, el: el.update(
        lib.BaseDataElement(metainfo=dict(sample_idx=8), name="dog", extra=1)
    ),
    "update with a dict": lambda lib, el: el.update(dict(name="dog")),
    "update clashing kinds": lambda lib, el: el.update(lib.BaseDataElement(sample_idx=1)),
    "to_dict": lambda lib, el: state(lib.BaseDataElement(**el.to_dict())),
}


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_operations_match_mmengine(operation):
    mine, reference = outcome(ours, operation), outcome(theirs, operation)
    if isinstance(reference, Exception):
        # the same kind of error (ours may also be a TypeError or ValueError)
        assert isinstance(mine, type(reference)), (mine, reference)
    else:
        assert not isinstance(mine, Exception), mine
        assert mine == reference


def test_errors_say_what_is_wrong():
    el = element(ours)
    with pytest.raises(AttributeError, match="'img_shape' as a data field.*already a metainfo"):
        el.img_shape = (4, 4)
    with pytest.raises(AttributeError, match="'gt_label' as a metainfo field.*already a data"):
        el.set_metainfo(dict(gt_label=1))
    with pytest.raises(AttributeError, match="_data_fields is private"):
        el._data_fields = set()
    with pytest.raises(TypeError, match="count must be a str, but got int"):
        el.set_field(3, "count", dtype=str)
    with pytest.raises(KeyError, match="'missing' is not a field.*'sample_idx'"):
        el.pop("missing")


@LIBS
def test_new_and_clone_copy_metainfo_deeply_and_share_data(lib):
    el = element(lib)
    clone = el.clone()
    assert type(clone) is type(el) and state(clone) == state(el)
    assert clone.pred_score is el.pred_score  # data values are shared, as in MMEngine
    clone.tags.append("b")  # metainfo is deep-copied
    assert el.tags == ["a"]

    fresh = el.new(metainfo=dict(other=1), pred_label=torch.tensor(0))
    assert fresh.metainfo_keys() == ["other"] and fresh.keys() == ["pred_label"]
    assert sorted(el.new(name="x").all_keys()) == ["img_shape", "name", "sample_idx", "tags"]


@LIBS
def test_tensor_methods_convert_data_recursively_and_keep_the_original(lib):
    inner = lib.BaseDataElement(mask=torch.ones(2, requires_grad=True), array=np.arange(3))
    el = lib.BaseDataElement(metainfo=dict(size=2), inner=inner, score=torch.ones(2), name="x")

    doubled = el.to(torch.float64)
    assert doubled.score.dtype == torch.float64 and doubled.inner.mask.dtype == torch.float64
    assert el.score.dtype == torch.float32 and doubled.name == "x" and doubled.size == 2
    assert el.to("cpu", non_blocking=True).score.device.type == "cpu"

    detached = el.detach()
    assert not detached.inner.mask.requires_grad and inner.mask.requires_grad
    assert isinstance(el.cpu().inner, lib.BaseDataElement)

    arrays = el.numpy()
    assert isinstance(arrays.score, np.ndarray) and isinstance(arrays.inner.mask, np.ndarray)
    assert arrays.name == "x"
    tensors = arrays.to_tensor()
    assert isinstance(tensors.inner.array, torch.Tensor) and tensors.inner.array.tolist() == [
        0,
        1,
        2,
    ]
    assert torch.equal(tensors.score, el.score)


def test_tensor_methods_match_mmengine():
    def build(lib):
        inner = lib.BaseDataElement(mask=torch.ones(2), array=np.arange(3))
        return lib.BaseDataElement(metainfo=dict(size=2), inner=inner, score=torch.ones(2))

    for method in ("cpu", "detach", "numpy", "to_tensor"):
        assert state(getattr(build(ours), method)()) == state(getattr(build(theirs), method)())
    assert state(build(ours).to(torch.int64)) == state(build(theirs).to(torch.int64))
    assert build(ours).to_dict()["inner"].keys() == build(theirs).to_dict()["inner"].keys()


class FakeAcceleratorTensor(torch.Tensor):
    """A tensor with the methods torch_npu, torch_mlu and torch_musa add."""

    def npu(self):
        return "on npu"

    def mlu(self):
        return "on mlu"

    def musa(self):
        return "on musa"


@pytest.mark.parametrize("method", ["npu", "mlu", "musa"])
def test_other_accelerators_call_the_tensor_method(method):
    el = BaseDataElement(x=torch.zeros(2).as_subclass(FakeAcceleratorTensor), name="y")
    moved = getattr(el, method)()
    assert moved.x == f"on {method}" and moved.name == "y"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@LIBS
def test_cuda_and_back(lib):
    inner = lib.BaseDataElement(mask=torch.ones(2))
    el = lib.BaseDataElement(score=torch.ones(2), inner=inner, name="x")
    for moved in (el.cuda(), el.to("cuda", non_blocking=True)):
        assert moved.score.is_cuda and moved.inner.mask.is_cuda and moved.name == "x"
        back = moved.cpu()
        assert back.score.device.type == "cpu" and back.inner.mask.device.type == "cpu"
    assert el.to("cuda").numpy().score.tolist() == [1.0, 1.0]


def detection_sample_class(lib):
    """A data sample with a typed field behind a property, as MMDetection writes them."""

    class DetDataSample(lib.BaseDataElement):
        @property
        def gt_instances(self):
            return self._gt_instances

        @gt_instances.setter
        def gt_instances(self, value):
            self.set_field(value, "_gt_instances", dtype=lib.BaseDataElement)

        @gt_instances.deleter
        def gt_instances(self):
            del self._gt_instances

    return DetDataSample


@LIBS
def test_fields_behind_properties(lib):
    sample_class = detection_sample_class(lib)
    instances = lib.BaseDataElement(labels=torch.tensor([1, 2]))
    sample = sample_class(metainfo=dict(img_id=3), gt_instances=instances, score=1.0)
    assert sorted(sample.keys()) == ["gt_instances", "score"]
    assert sample.gt_instances is instances and "gt_instances" in sample
    assert sorted(sample.to_dict()) == ["gt_instances", "img_id", "score"]
    with pytest.raises(AssertionError):
        sample.gt_instances = torch.tensor([1])
    moved = sample.to("cpu")
    assert isinstance(moved, sample_class) and moved.keys() == sample.keys()
    del sample.gt_instances
    assert "gt_instances" not in sample and sample.keys() == ["score"]


def test_pop_of_a_field_behind_a_property():
    sample_class = detection_sample_class(ours)
    instances = BaseDataElement(labels=torch.tensor([1, 2]))
    sample = sample_class(gt_instances=instances)
    assert sample.pop("gt_instances") is instances  # MMEngine raised a KeyError here
    assert "gt_instances" not in sample and sample.keys() == []


def test_fields_keep_the_order_they_were_set_in():
    el = BaseDataElement(metainfo=dict(z=1, a=2), c=1, b=2)
    el.a_data = 3
    assert el.metainfo_keys() == ["z", "a"] and el.keys() == ["c", "b", "a_data"]
    assert list(el.to_dict()) == ["z", "a", "c", "b", "a_data"]
    assert list(el.to("cpu").to_dict()) == list(el.to_dict())


@LIBS
def test_equality_is_identity_as_in_mmengine(lib):
    el = element(lib)
    other = element(lib)
    assert el == el and el != other and len({el, other}) == 2


@pytest.mark.parametrize("copier", [copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))])
def test_pickle_and_deepcopy_keep_fields_and_rules(copier):
    inner = BaseDataElement(mask=torch.ones(2))
    el = BaseDataElement(metainfo=dict(img_shape=(2, 3)), inner=inner, score=torch.ones(2))
    copied = copier(el)
    assert state(copied) == state(el) and copied.score is not el.score
    copied.extra = 1
    assert "extra" in copied and "extra" not in el
    with pytest.raises(AttributeError, match="already a metainfo field"):
        copied.img_shape = (1, 1)
    with pytest.raises(AttributeError, match="private"):
        copied._metainfo_fields = set()


@pytest.mark.parametrize("element_type", [ours.BaseDataElement, ours.InstanceData])
def test_a_shallow_copy_shares_values_but_not_the_field_lists(element_type):
    el = element_type(metainfo=dict(img_shape=(2, 3)), score=torch.ones(2))
    copied = copy.copy(el)
    assert copied.score is el.score and copied.img_shape == el.img_shape
    copied.labels = torch.zeros(2)
    copied.set_metainfo(dict(flip=True))
    assert "labels" in copied and "labels" not in el and el.keys() == ["score"]
    assert "flip" not in el.metainfo_keys()


def printed(lib) -> list[str]:
    """``repr`` of an empty and of a nested element (one field a level, so the order cannot
    differ between the libraries), with the object addresses taken out."""
    el = lib.BaseDataElement(metainfo=dict(pad=dict(size=(4, 4), value=[0])))
    el.inst = lib.InstanceData(metainfo=dict(img_shape=(2, 2)), boxes=torch.ones(2, 2))
    return [re.sub("0x[0-9a-f]+", "ADDR", repr(x)) for x in (lib.BaseDataElement(), el)]


def test_repr_has_mmengines_layout():
    empty, nested = printed(ours)
    assert [empty, nested] == printed(theirs)
    # a blank line before each section, dict values and the nested element a level deeper
    assert empty == "<BaseDataElement(\n\n    META INFORMATION\n\n    DATA FIELDS\n) at ADDR>"
    assert nested.startswith("<BaseDataElement(\n\n    META INFORMATION\n    pad: \n        size")
    assert "\n\n    DATA FIELDS\n    inst: <InstanceData(\n        \n            META" in nested
    assert nested.endswith("                    [1., 1.]])\n        ) at ADDR>\n) at ADDR>")
