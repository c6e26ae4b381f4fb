"""pseudo_collate and default_collate on nested samples, and their FUNCTIONS names."""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch

from runnerx.data import default_collate, pseudo_collate
from runnerx.registry import FUNCTIONS

Point = namedtuple("Point", "x y")


def samples():
    return [
        dict(
            inputs=torch.full((2, 3), float(i)),
            data_samples=dict(label=i, name=f"s{i}", meta=[i, (i * 10, torch.tensor(i))]),
            point=Point(i, float(i) / 2),
        )
        for i in range(3)
    ]


def test_collate_functions_are_registered_under_mmengine_names():
    assert FUNCTIONS.get("pseudo_collate") is pseudo_collate
    assert FUNCTIONS.get("default_collate") is default_collate


def test_pseudo_collate_transposes_without_stacking():
    batch = samples()
    out = pseudo_collate(batch)
    assert set(out) == {"inputs", "data_samples", "point"}
    assert isinstance(out["inputs"], list) and len(out["inputs"]) == 3
    assert all(out["inputs"][i] is batch[i]["inputs"] for i in range(3))
    assert out["data_samples"]["label"] == [0, 1, 2]
    assert out["data_samples"]["name"] == ["s0", "s1", "s2"]
    meta = out["data_samples"]["meta"]
    assert meta[0] == [0, 1, 2]
    assert meta[1][0] == [0, 10, 20]  # a tuple position becomes a list
    assert [t.item() for t in meta[1][1]] == [0, 1, 2]
    assert out["point"] == Point([0, 1, 2], [0.0, 0.5, 1.0])


def test_default_collate_stacks_tensors_and_numbers_recursively():
    out = default_collate(samples())
    assert out["inputs"].shape == (3, 2, 3)
    assert torch.equal(out["inputs"][:, 0, 0], torch.tensor([0.0, 1.0, 2.0]))
    label = out["data_samples"]["label"]
    assert label.dtype == torch.int64 and label.tolist() == [0, 1, 2]
    assert out["data_samples"]["name"] == ["s0", "s1", "s2"]
    meta = out["data_samples"]["meta"]
    assert meta[0].tolist() == [0, 1, 2]
    assert meta[1][0].tolist() == [0, 10, 20]
    assert meta[1][1].tolist() == [0, 1, 2]
    point = out["point"]
    assert isinstance(point, Point) and point.y.dtype == torch.float64


def test_default_collate_turns_numpy_into_tensors_and_keeps_other_objects_in_lists():
    marker = object()
    out = default_collate([(np.ones(2), marker), (np.zeros(2), marker)])
    assert torch.equal(out[0], torch.tensor([[1.0, 1.0], [0.0, 0.0]], dtype=torch.float64))
    assert out[1] == [marker, marker]


def test_mapping_types_are_kept():
    out = default_collate([OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)])
    assert isinstance(out, OrderedDict) and list(out) == ["b", "a"]


@pytest.mark.parametrize("collate", [pseudo_collate, default_collate])
def test_sequences_of_different_lengths_are_an_error(collate):
    with pytest.raises(RuntimeError, match="different lengths"):
        collate([[1, 2], [3]])


def test_default_collate_rejects_tensors_of_different_shapes():
    with pytest.raises(RuntimeError):
        default_collate([torch.zeros(2), torch.zeros(3)])
