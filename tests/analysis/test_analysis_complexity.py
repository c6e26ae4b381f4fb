"""runnerx.analysis against mmengine-lite's ``mmengine.analysis`` (the oracle): the same model
and inputs give the same flops, activations and parameters, in total and per module."""

from __future__ import annotations

import re
import warnings
from collections import Counter

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from runnerx.analysis import (
    ActivationAnalyzer,
    FlopAnalyzer,
    activation_count,
    flop_count,
    get_model_complexity_info,
    parameter_count,
    parameter_count_table,
)
from runnerx.analysis import analyzers as analyzers_module
from runnerx.model.examples.char_transformer import CharTransformerLM
from runnerx.model.examples.digits_convnet import DigitsConvNet

mm_analysis = pytest.importorskip("mmengine.analysis")


class ConvNet(nn.Module):
    """Conv + BatchNorm + ReLU, max-pool, depthwise and grouped convs, global pool, Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.pool = nn.MaxPool2d(2)
        self.depthwise = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.grouped = nn.Conv2d(8, 16, 3, groups=4)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.grouped(self.depthwise(self.pool(self.stem(x))))
        return self.fc(self.gap(x).flatten(1))


class UpsampleNet(nn.Module):
    """Upsampling (module and functional), the norm layers, a transposed conv, a 3x3 pool."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.up = nn.Upsample(scale_factor=2)
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.ln = nn.LayerNorm(16)
        self.deconv = nn.ConvTranspose2d(4, 2, 2, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.interpolate(self.up(self.conv(x)), scale_factor=2, mode="bilinear")
        return self.pool(self.deconv(self.ln(self.inorm(self.gn(x)))))


class MatmulAttention(nn.Module):
    """Attention written out: q @ k^T, softmax, einsum with v, a projection."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width, bias=False)
        self.out = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weights = (self.q(x) @ self.k(x).transpose(-1, -2)).softmax(-1)
        return self.out(torch.einsum("bij,bjk->bik", weights, x))


def tiny_lm() -> CharTransformerLM:
    return CharTransformerLM(vocab_size=32, block_size=16, n_layer=2, n_head=2, n_embd=16)


def analyzers(model: nn.Module, inputs: tuple) -> tuple:
    """(ours, MMEngine's) flop and activation analyzers, warnings off."""
    pairs = []
    for flops, acts in (
        (FlopAnalyzer, ActivationAnalyzer),
        (mm_analysis.FlopAnalyzer, mm_analysis.ActivationAnalyzer),
    ):
        made = [cls(model, inputs).unsupported_ops_warnings(False) for cls in (flops, acts)]
        pairs.append([a.uncalled_modules_warnings(False) for a in made])
    return pairs


def assert_same_counts(model: nn.Module, inputs: tuple) -> tuple:
    (flops, acts), (mm_flops, mm_acts) = analyzers(model, inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert flops.by_module() == mm_flops.by_module()
        assert acts.by_module() == mm_acts.by_module()
    assert flops.total() > 0 and acts.total() > 0
    return flops, mm_flops


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_conv_net_matches_mmengine_per_module_and_operator(training):
    model = ConvNet().train(training)
    flops, mm_flops = assert_same_counts(model, (torch.randn(2, 3, 16, 16),))
    assert flops.by_operator() == mm_flops.by_operator()
    assert flops.total("stem.1") == mm_flops.total("stem.1")  # BN: 5 per element or 2
    assert flops.unsupported_ops() == mm_flops.unsupported_ops()  # max_pool2d, BN's counter
    assert flops.uncalled_modules() == mm_flops.uncalled_modules() == set()


def test_digits_example_model_matches_mmengine():
    flops, mm_flops = assert_same_counts(DigitsConvNet().eval(), (torch.randn(4, 64),))
    assert flops.by_operator() == mm_flops.by_operator()
    assert flops.uncalled_modules() == mm_flops.uncalled_modules() == {"data_preprocessor"}


def test_upsample_norms_and_transposed_conv_match_mmengine():
    model, inputs = UpsampleNet(), (torch.randn(2, 3, 4, 4),)
    assert_same_counts(model, inputs)
    for count in (flop_count, activation_count):
        ours, ours_unsupported = count(model, inputs)
        theirs, theirs_unsupported = getattr(mm_analysis, count.__name__)(model, inputs)
        assert ours == theirs and ours_unsupported == theirs_unsupported


@pytest.mark.parametrize("contiguous", [True, False])
def test_linear_on_3d_inputs_matches_mmengine(contiguous):
    model = nn.Sequential(nn.Linear(16, 8), nn.Linear(8, 4, bias=False), nn.Linear(4, 4))
    x = torch.randn(2, 5, 16) if contiguous else torch.randn(2, 16, 5).transpose(1, 2)
    flops, mm_flops = assert_same_counts(model, (x,))
    assert flops.by_operator() == mm_flops.by_operator() == Counter(linear=flops.total())
    assert flops.unsupported_ops() == mm_flops.unsupported_ops() == Counter()


class FunctionalLinear(nn.Module):
    """nn.MultiheadAttention (its projections call F.linear) and an nn.Linear reached
    through .forward(): MMEngine's trace sees both as aten::linear."""

    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(16, 2, batch_first=True)
        self.proj = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj.forward(self.attn(x, x, x)[0])


@pytest.mark.skipif(
    not hasattr(torch.overrides, "redispatch_function"),
    reason="older torch: F.linear inside F.multi_head_attention_forward is not seen",
)
def test_functional_linear_counts_as_aten_linear_like_mmengine():
    model, inputs = FunctionalLinear(), (torch.randn(2, 5, 16),)
    (flops, acts), (mm_flops, mm_acts) = analyzers(model, inputs)
    assert flops.by_operator() == mm_flops.by_operator()
    assert set(flops.by_operator()) == {"linear", "bmm"}
    assert acts.by_operator() == mm_acts.by_operator()
    # a handle for aten::linear reaches the projections (total: 3 linears + 1600 bmm flops)
    flops.set_op_handle("aten::linear", lambda inputs, outputs: 1)
    mm_flops.set_op_handle("aten::linear", lambda inputs, outputs: 1)
    assert flops.by_module() == mm_flops.by_module()
    assert flops.total() == 1603


def test_written_out_attention_matches_mmengine_per_module():
    """matmul and einsum reach the dispatcher as mm/bmm: same numbers, other op names."""
    assert_same_counts(MatmulAttention(), (torch.randn(2, 5, 16),))


def test_char_transformer_complexity_info_matches_mmengine():
    model, inputs = tiny_lm(), (torch.randint(0, 32, (2, 16)),)
    info = get_model_complexity_info(model, inputs=inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = mm_analysis.get_model_complexity_info(model, inputs=inputs)
    for key in ("flops", "flops_str", "activations", "activations_str", "params", "params_str"):
        assert info[key] == expected[key], key
    flops, mm_flops = assert_same_counts(model, inputs)
    for name in ("blocks.0.attn", "blocks.1.mlp", "ln_f", "head"):
        assert flops.total(name) == mm_flops.total(name) > 0
    # every module row of MMEngine's table is in ours (rich cuts long names with '…')
    names = re.findall(r"^\|\s+(\S+?)…?\s+\|", expected["out_table"], re.M)
    assert "blocks.0.attn" in names
    for name in names:
        assert re.search(rf"^\|\s+{re.escape(name)}", info["out_table"], re.M), name
    # the annotated repr is MMEngine's below its first line (the N/A note, worded apart)
    assert info["out_arch"].splitlines()[2:] == expected["out_arch"].splitlines()[2:]


def test_input_shape_builds_random_inputs_like_mmengine():
    model = ConvNet().eval()
    info = get_model_complexity_info(
        model, input_shape=(3, 16, 16), show_table=False, show_arch=False
    )
    expected = mm_analysis.get_model_complexity_info(model, input_shape=(3, 16, 16))
    assert (info["flops"], info["params"]) == (expected["flops"], expected["params"])
    assert info["out_table"] == info["out_arch"] == ""
    assert "stem" in expected["out_table"]


class Shared(nn.Module):
    """A module reachable under two names, one called through .forward(), one unused."""

    def __init__(self) -> None:
        super().__init__()
        self.shared = nn.Linear(8, 8)
        self.inner = nn.Sequential(self.shared, nn.Linear(8, 8))
        self.direct = nn.Linear(8, 8)
        self.unused = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.direct.forward(self.inner(self.shared(x)))


@pytest.mark.parametrize("mode", ["owner", "caller"])
def test_shared_uncalled_and_direct_forward_modules_match_mmengine(mode):
    model, inputs = Shared(), (torch.randn(3, 8),)
    (flops, _), (mm_flops, _) = analyzers(model, inputs)
    assert flops.ancestor_mode(mode).by_module() == mm_flops.ancestor_mode(mode).by_module()
    assert flops.uncalled_modules() == mm_flops.uncalled_modules() == {"direct", "unused"}
    assert flops.canonical_module_name("inner.0") == "shared"


def test_parameter_counts_match_mmengine_and_the_table_lists_them():
    model = tiny_lm()  # its head's weight is tied to the token embedding: counted once
    assert parameter_count(model) == mm_analysis.parameter_count(model)
    table = parameter_count_table(model, max_depth=2)
    for name in mm_analysis.parameter_count(model):
        if name and name.count(".") < 2:
            assert re.search(rf"^\|\s+{re.escape(name)}\s", table, re.M), name
    assert "(32, 16)" in table and "blocks.0.ln_1" not in table


def test_format_size_of_get_flops_tools_matches_mmengine():
    """The ``get_flops.py`` tools of mmdet/mmseg/mmpretrain import ``_format_size`` here."""
    from mmengine.analysis.print_helper import _format_size as theirs

    from runnerx.analysis.print_helper import _format_size

    for value in (0, 7, 999, 1234, 1234567, 2.5e9, 3e12, 4.2e15):
        assert _format_size(value) == theirs(value), value
    assert _format_size(0, hide_zero=True) == theirs(0, hide_zero=True) == ""
    assert _format_size(1234567, sig_figs=1) == theirs(1234567, sig_figs=1)


def test_set_op_handle_ignores_or_adds_ops():
    """None ignores the op (MMEngine keeps counting an op that has a handle: a bug)."""
    model, inputs = ConvNet().eval(), (torch.randn(1, 3, 8, 8),)
    (flops, _), (mm_flops, _) = analyzers(model, inputs)
    bn_flops = mm_flops.by_operator()["batch_norm"]
    flops.set_op_handle("aten::batch_norm", None)
    assert flops.total() == mm_flops.total() - bn_flops > 0
    assert flops.total("stem.1") == 0 and "aten::batch_norm" not in flops.unsupported_ops()
    pooled, unsupported = flop_count(model, inputs, {"aten::max_pool2d": lambda i, o: o[0].numel()})
    assert pooled["max_pool2d"] == pytest.approx(8 * 4 * 4 / 1e9)
    assert "aten::max_pool2d" not in unsupported


def test_analysis_warnings_are_logged_once_per_process(logged_warnings, monkeypatch):
    """As WARNINGs of runnerx.analysis (MMEngine's logger drops repeats), not printed."""
    monkeypatch.setattr(analyzers_module, "_LOGGED", set())
    messages = logged_warnings("runnerx.analysis")
    model = nn.ModuleDict({"used": nn.Linear(4, 4), "unused": nn.Linear(4, 4)})
    model.forward = lambda x: F.gelu(model["used"](x))
    for analyzer in (FlopAnalyzer, ActivationAnalyzer, FlopAnalyzer):
        analyzer(model, (torch.randn(2, 4),)).total()
    assert messages[0] == "Unsupported operator aten::gelu encountered 1 time(s)"
    assert len(messages) == 2 and messages[1].endswith("calling them): unused")


def test_bad_arguments_say_what_was_expected():
    model = ConvNet()
    with pytest.raises(ValueError, match="exactly one of input_shape and inputs"):
        get_model_complexity_info(model)
    with pytest.raises(ValueError, match="input_shape must be a tuple of ints"):
        get_model_complexity_info(model, input_shape=[3, 8, 8])
    with pytest.raises(KeyError, match="did you mean 'stem'"):
        FlopAnalyzer(model, (torch.randn(1, 3, 8, 8),)).total("stme")
    with pytest.raises(ValueError, match="ancestor_mode must be one of"):
        FlopAnalyzer(model, (torch.randn(1, 3, 8, 8),)).ancestor_mode("parent")
