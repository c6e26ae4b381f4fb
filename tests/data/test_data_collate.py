"""pseudo_collate and default_collate on nested samples (the batches MMEngine's give), their
FUNCTIONS names, and a Runner on tuple samples."""

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import TensorDataset

from runnerx.data import default_collate, pseudo_collate
from runnerx.model import BaseModel
from runnerx.registry import FUNCTIONS, MODELS

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
    assert meta[0] == (0, 1, 2)  # the positions of a sequence stay the tuples zip makes
    assert meta[1][0] == (0, 10, 20)
    assert [t.item() for t in meta[1][1]] == [0, 1, 2]
    assert out["point"] == Point((0, 1, 2), (0.0, 0.5, 1.0))


def test_default_collate_stacks_tensors_and_numbers_recursively():
    out = default_collate(samples())
    assert out["inputs"].shape == (3, 2, 3)
    assert torch.equal(out["inputs"][:, 0, 0], torch.tensor([0.0, 1.0, 2.0]))
    label = out["data_samples"]["label"]
    assert label.dtype == torch.int64 and label.tolist() == [0, 1, 2]
    assert out["data_samples"]["name"] == ["s0", "s1", "s2"]  # a list under a dict key
    meta = out["data_samples"]["meta"]
    assert meta[0].tolist() == [0, 1, 2]
    assert meta[1][0].tolist() == [0, 10, 20]
    assert meta[1][1].tolist() == [0, 1, 2]
    point = out["point"]
    assert isinstance(point, Point) and point.y.dtype == torch.float64


def test_default_collate_turns_numpy_into_tensors_and_keeps_other_objects_as_they_are():
    marker = object()
    out = default_collate([(np.ones(2), marker), (np.zeros(2), marker)])
    assert torch.equal(out[0], torch.tensor([[1.0, 1.0], [0.0, 0.0]], dtype=torch.float64))
    assert out[1] == (marker, marker)


MMENGINE_CASES = {
    "tuple samples": [(torch.tensor([0.5]), 1), (torch.tensor([1.5]), 2)],
    "dict of tuples": [dict(a=(1, 2)), dict(a=(3, 4))],
    "strings at positions": [("a", 1), ("b", 2)],
    "strings under a key": [dict(name="a"), dict(name="b")],
    "namedtuples": [Point(1, "a"), Point(2, "b")],
    "lists": [[1, "x"], [2, "y"]],
    "strings": ["a", "b"],
    "nested": [
        dict(inputs=torch.ones(2), meta=dict(tags=("u", "v"), size=(3, 4), ids=[i, i + 1]))
        for i in range(3)
    ],
}


def assert_same_batch(actual, expected, where="batch"):
    """Equal values in containers of the same types, all the way down."""
    assert type(actual) is type(expected), f"{where}: {type(actual)} != {type(expected)}"
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype and torch.equal(actual, expected), where
    elif isinstance(expected, dict):
        assert list(actual) == list(expected), where
        for key in expected:
            assert_same_batch(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), where
        for index, (got, want) in enumerate(zip(actual, expected)):
            assert_same_batch(got, want, f"{where}[{index}]")
    else:
        assert actual == expected, where


@pytest.mark.parametrize("case", MMENGINE_CASES)
@pytest.mark.parametrize("name", ["pseudo_collate", "default_collate"])
def test_collate_gives_mmengines_batches(name, case):
    import mmengine.dataset

    ours = {"pseudo_collate": pseudo_collate, "default_collate": default_collate}[name]
    theirs = getattr(mmengine.dataset, name)
    assert_same_batch(ours(MMENGINE_CASES[case]), theirs(MMENGINE_CASES[case]))


def test_mapping_types_are_kept():
    out = default_collate([OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)])
    assert isinstance(out, OrderedDict) and list(out) == ["b", "a"]


@pytest.mark.parametrize("collate", [pseudo_collate, default_collate])
def test_sequences_of_different_lengths_are_an_error(collate):
    with pytest.raises(RuntimeError, match="different lengths"):
        collate([[1, 2], [3]])


def test_default_collate_rejects_tensors_of_different_shapes_naming_where_and_the_cure():
    with pytest.raises(
        RuntimeError, match=r"samples' values have different shapes \(\(2,\), \(3,\)\)"
    ):
        default_collate([torch.zeros(2), torch.zeros(3)])
    ragged = [dict(inputs=(torch.zeros(66), torch.zeros(1)), label=0) for _ in range(5)]
    ragged[1]["inputs"] = (torch.zeros(65), torch.zeros(1))
    with pytest.raises(RuntimeError) as caught:
        default_collate(ragged)
    assert str(caught.value) == (
        "default_collate: the samples' ['inputs'][0] have different shapes ((66,), (65,), "
        "(66,), (66,), ...), so they cannot be stacked into a batch; pad them to one shape in "
        "the dataset or its transforms, or use collate_fn=dict(type='pseudo_collate') (lists) "
        "and batch them in the model's data_preprocessor"
    )


@MODELS.register_module(name="TestCollateTupleNet", force=True)
class TupleNet(BaseModel):
    """Takes the ``(images, labels)`` batches of a tuple dataset and notes their types."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor)
        self.linear = nn.Linear(4, 3)
        self.seen = set()

    def forward(self, inputs, labels, mode="tensor"):
        self.seen.add((mode, type(inputs).__name__, type(labels).__name__))
        scores = self.linear(torch.stack(inputs))
        if mode == "loss":
            return dict(loss=nn.functional.cross_entropy(scores, torch.stack(labels)))
        return [dict(pred_score=s, gt_label=g) for s, g in zip(scores, labels)]


def test_a_runner_trains_and_validates_on_tuple_samples_with_the_default_collate(tmp_path):
    from runnerx.runner import Runner

    generator = torch.Generator().manual_seed(0)
    dataset = TensorDataset(torch.randn(12, 4, generator=generator), torch.arange(12) % 3)
    loader = dict(dataset=dataset, batch_size=4, sampler=dict(type="DefaultSampler"))
    runner = Runner(
        model=dict(type="TestCollateTupleNet", data_preprocessor=dict(type="BaseDataPreprocessor")),
        work_dir=str(tmp_path),
        train_dataloader=loader,
        val_dataloader=loader,
        val_evaluator=dict(type="Accuracy"),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        val_cfg=dict(),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(checkpoint=None),
    )
    runner.train()
    assert set(runner.val()) == {"accuracy/top1"}
    assert runner.unwrapped_model.seen == {
        ("loss", "tuple", "tuple"),
        ("predict", "tuple", "tuple"),
    }
