"""model_summary: parameter counts per submodule, trainable and frozen, sizes, buffers."""

import pytest
import torch
from torch import nn

from runnerx.model import DigitsConvNet, model_summary


class Tied(nn.Module):
    """An embedding and an output layer sharing one weight, a frozen part and a BN."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 8)
        self.head = nn.Linear(8, 100, bias=False)
        self.head.weight = self.embed.weight
        self.frozen = nn.Linear(8, 8)
        self.frozen.requires_grad_(False)
        self.norm = nn.BatchNorm1d(8)


def table(summary):
    """(header, {name: (type, parameters, trainable)}) of a summary's text."""
    header, _columns, *rows = summary.splitlines()
    cells = {}
    for row in rows:
        name, kind, *counts = row.split()
        text = " ".join(counts)  # '4.8 K 4.8 K' or '160 160'
        parts = text.split(" ")
        half = len(parts) // 2
        cells[name] = (kind, " ".join(parts[:half]), " ".join(parts[half:]))
    return header, cells


def test_totals_count_a_shared_weight_once_and_rows_count_what_each_module_holds():
    header, rows = table(model_summary(Tied()))
    # 800 shared + 72 frozen + 16 norm = 888; trainable 816
    assert header == ("Tied: 888 parameters (816 trainable, 72 frozen), 0.00 MB; 17 buffer values")
    assert rows == {
        "embed": ("Embedding", "800", "800"),
        "head": ("Linear", "800", "800"),
        "frozen": ("Linear", "72", "0"),
        "norm": ("BatchNorm1d", "16", "16"),
    }


def test_depth_zero_gives_the_totals_and_deeper_levels_get_dotted_names():
    model = DigitsConvNet()
    assert "\n" not in model_summary(model, max_depth=0)
    _, level_one = table(model_summary(model))
    _, level_two = table(model_summary(model, max_depth=2))
    assert list(level_one) == ["data_preprocessor", "features", "classifier"]
    assert set(level_one) < set(level_two)
    assert level_two["features.0"] == ("Conv2d", "160", "160")  # 1*16*3*3 + 16
    total = sum(p.numel() for p in model.parameters())
    assert model_summary(model).startswith(f"DigitsConvNet: {total / 1000:.1f} K parameters")


def test_sizes_follow_the_parameter_dtype_and_large_counts_are_shortened():
    model = nn.Linear(1000, 1000)  # 1,001,000 parameters
    assert model_summary(model) == ("Linear: 1.0 M parameters (1.0 M trainable, 0 frozen), 4.00 MB")
    assert model_summary(model.to(torch.bfloat16)).endswith(", 2.00 MB")
    wide = nn.Embedding(2_500_000, 1000, device="meta")  # sized without memory
    assert model_summary(wide).startswith("Embedding: 2.5 B parameters")


def test_lazy_parameters_are_counted_apart_until_they_are_sized():
    model = nn.Sequential(nn.LazyLinear(4))
    assert model_summary(model, 0).endswith("; 2 lazy parameter(s) not sized yet")
    model(torch.zeros(1, 3))
    assert model_summary(model, 0) == "Sequential: 16 parameters (16 trainable, 0 frozen), 0.00 MB"


@pytest.mark.parametrize("depth", [-1, 1.5, True, "1"])
def test_a_bad_depth_is_refused(depth):
    with pytest.raises(ValueError, match="max_depth must be an int >= 0"):
        model_summary(nn.Linear(1, 1), depth)
