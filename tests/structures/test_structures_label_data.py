"""LabelData's conversions between labels and one-hot vectors, against mmengine-lite's."""

import mmengine.structures as theirs
import pytest
import torch

import runnerx.structures as ours
from runnerx.structures import LabelData

CASES = {
    "one label": lambda lib: lib.LabelData.label_to_onehot(torch.tensor([2]), 5),
    "several labels": lambda lib: lib.LabelData.label_to_onehot(torch.tensor([0, 3, 3]), 4),
    "no label": lambda lib: lib.LabelData.label_to_onehot(torch.tensor([], dtype=torch.long), 3),
    "uint8 labels": lambda lib: lib.LabelData.label_to_onehot(
        torch.tensor([1], dtype=torch.uint8), 2
    ),
    "label too large": lambda lib: lib.LabelData.label_to_onehot(torch.tensor([1, 5]), 5),
    "label not a tensor": lambda lib: lib.LabelData.label_to_onehot([1], 5),
    "one-hot": lambda lib: lib.LabelData.onehot_to_label(torch.tensor([0, 1, 0])),
    "multi-hot": lambda lib: lib.LabelData.onehot_to_label(torch.tensor([1.0, 0.0, 1.0])),
    "all zeros": lambda lib: lib.LabelData.onehot_to_label(torch.zeros(4)),
    "not 0 or 1": lambda lib: lib.LabelData.onehot_to_label(torch.tensor([0, 2])),
    "negative": lambda lib: lib.LabelData.onehot_to_label(torch.tensor([-1, 1])),
    "2-D": lambda lib: lib.LabelData.onehot_to_label(torch.tensor([[0, 1]])),
    "onehot not a tensor": lambda lib: lib.LabelData.onehot_to_label([0, 1]),
    "round trip": lambda lib: lib.LabelData.onehot_to_label(
        lib.LabelData.label_to_onehot(torch.tensor([4, 1]), 6)
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_conversions_match_mmengine(case):
    def run(lib):
        try:
            result = case(lib)
        except Exception as error:  # the error is the outcome compared
            return error
        return result.dtype, result.tolist()

    mine, reference = run(ours), run(theirs)
    if isinstance(reference, Exception):
        assert isinstance(mine, type(reference)), (mine, reference)
    else:
        assert mine == reference


def test_a_single_label_and_clear_errors():
    assert LabelData.label_to_onehot(torch.tensor(2), 3).tolist() == [0, 0, 1]  # MMEngine failed
    with pytest.raises(ValueError, match="label 5 is out of range for num_classes=5"):
        LabelData.label_to_onehot(torch.tensor([5]), 5)
    with pytest.raises(ValueError, match="1-D tensor of values in \\[0, 1\\]"):
        LabelData.onehot_to_label(torch.tensor([0, 2]))
    labels = LabelData(metainfo=dict(num_classes=3), label=torch.tensor([1]))
    assert labels.to_dict() == dict(num_classes=3, label=labels.label)
