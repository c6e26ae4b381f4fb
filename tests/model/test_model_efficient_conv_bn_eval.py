"""efficient_conv_bn_eval: frozen BNs folded into the convolutions before them (MMEngine's
key and functions), checked against the unfolded model and mmengine-lite's transform."""

import copy
import logging
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from mmengine.model import efficient_conv_bn_eval as mmengine_conv_bn
from torch import nn

from runnerx import Config
from runnerx.model import BaseModel
from runnerx.model import efficient_conv_bn_eval as conv_bn
from runnerx.model.efficient_conv_bn_eval import (
    turn_on_efficient_conv_bn_eval,
    turn_on_efficient_conv_bn_eval_for_single_model,
)
from runnerx.parallel import apply_activation_checkpointing
from runnerx.registry import MODELS
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


class ConvBNReLU(nn.Module):
    def __init__(self, cin: int, cout: int, bias: bool = True, affine: bool = True) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=bias)
        self.bn = nn.BatchNorm2d(cout, affine=affine)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class Backbone(nn.Module):
    """Three conv -> bn -> relu blocks whose BNs stay frozen in eval mode through ``train()``
    (as ``norm_eval=True`` keeps them), one conv without bias, one BN without affine
    parameters, and a last conv -> bn whose BN trains."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvBNReLU(1, 8)
        self.layer = nn.Sequential(ConvBNReLU(8, 8, bias=False), ConvBNReLU(8, 8, affine=False))
        self.conv = nn.Conv2d(8, 16, 1)
        self.bn = nn.BatchNorm2d(16)
        with torch.no_grad():  # statistics and affine parameters far from the identity
            for bn in self.modules():
                if isinstance(bn, nn.BatchNorm2d):
                    bn.running_mean.uniform_(-0.5, 0.5)
                    bn.running_var.uniform_(0.5, 2.0)
                    if bn.affine:
                        bn.weight.uniform_(0.5, 1.5)
                        bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.bn(self.conv(self.layer(self.stem(x))))

    def train(self, mode: bool = True):
        super().train(mode)
        for block in (self.stem, *self.layer):
            block.bn.eval()
        return self


FROZEN_PAIRS = 3  # stem, layer.0, layer.1


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.head = nn.Linear(16, 10)

    def forward(self, x):
        return self.head(self.backbone(x).mean((2, 3)))


@pytest.fixture
def fold_calls(monkeypatch):
    """Counts the folded convolutions that run (``calls[0]``)."""
    calls = [0]
    folded_forward = conv_bn.efficient_conv_bn_eval_forward

    def counting(bn, conv, x):
        calls[0] += 1
        return folded_forward(bn, conv, x)

    monkeypatch.setattr(conv_bn, "efficient_conv_bn_eval_forward", counting)
    return calls


@pytest.fixture
def models():
    """The same Net three times: as built, folded by runnerx, folded by mmengine-lite."""
    torch.manual_seed(0)
    plain = Net()
    ours, theirs = copy.deepcopy(plain), copy.deepcopy(plain)
    turn_on_efficient_conv_bn_eval(ours, ["backbone"])
    mmengine_conv_bn.turn_on_efficient_conv_bn_eval(theirs, ["backbone"])
    return plain, ours, theirs


def step(model, x):
    """Output, parameter gradients and state after one forward and backward pass."""
    model.zero_grad()
    out = model(x)
    out.square().sum().backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters()}
    return out.detach(), grads, copy.deepcopy(model.state_dict())


def assert_same_step(got, expected):
    torch.testing.assert_close(got[0], expected[0], rtol=1e-4, atol=1e-5)
    for part in (1, 2):
        assert got[part].keys() == expected[part].keys()
        for key, value in expected[part].items():
            torch.testing.assert_close(got[part][key], value, rtol=1e-4, atol=1e-5, msg=key)


@pytest.mark.parametrize("mode", ["train", "eval"])
def test_outputs_gradients_and_statistics_match_the_unfolded_model_and_mmengine(
    models, fold_calls, mode
):
    x = torch.randn(4, 1, 8, 8)
    results = []
    for model in models:
        getattr(model, mode)()
        results.append(step(model, x))
    plain, ours, theirs = results
    assert_same_step(ours, plain)
    assert_same_step(ours, theirs)
    # the frozen BNs are folded; the last one too, once eval() froze it
    assert fold_calls[0] == FROZEN_PAIRS + (mode == "eval")


def test_a_bn_in_train_mode_updates_its_statistics_as_usual(models):
    plain, ours, _ = models
    before = ours.backbone.bn.running_mean.clone()
    x = torch.randn(4, 1, 8, 8)
    for model in (plain, ours):
        model.train()(x)
    assert not torch.equal(ours.backbone.bn.running_mean, before)
    torch.testing.assert_close(ours.backbone.bn.running_mean, plain.backbone.bn.running_mean)
    assert ours.backbone.bn.num_batches_tracked.item() == 1
    # a frozen BN keeps its statistics
    assert torch.equal(ours.backbone.stem.bn.running_mean, plain.backbone.stem.bn.running_mean)


def test_a_folded_pair_keeps_no_activation_for_the_bn_backward(models):
    x = torch.randn(4, 1, 8, 8)
    activation = 4 * 8 * 8 * 8  # the smallest activation of the blocks

    def large_saved_tensors(model):
        sizes = []

        def pack(tensor):
            sizes.append(tensor.numel())
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            model.train()(x).sum().backward()
        return sum(size >= activation for size in sizes)

    plain, ours, _ = models
    assert large_saved_tensors(ours) <= large_saved_tensors(plain) - FROZEN_PAIRS


def test_the_state_dict_keeps_its_keys_and_values(models):
    plain, ours, _ = models
    assert list(ours.state_dict()) == list(plain.state_dict())
    for key, value in plain.state_dict().items():
        assert torch.equal(ours.state_dict()[key], value)
    fresh = Net()
    fresh.load_state_dict(ours.state_dict())  # strict
    ours.load_state_dict(plain.state_dict())


def test_nested_blocks_stay_modules_whose_hooks_run(models, fold_calls):
    _, ours, _ = models
    seen = []
    ours.backbone.layer[0].register_forward_hook(lambda module, args, out: seen.append(out))
    ours.train()(torch.randn(2, 1, 8, 8))
    assert len(seen) == 1
    assert fold_calls[0] == FROZEN_PAIRS


def test_runnerx_activation_checkpointing_applied_afterwards_keeps_the_fold(models, fold_calls):
    plain, ours, _ = models
    checkpointed = apply_activation_checkpointing(ours, dict(modules=["ConvBNReLU"]))
    assert len(checkpointed) == 3
    x = torch.randn(4, 1, 8, 8)
    assert_same_step(step(ours.train(), x), step(plain.train(), x))
    assert fold_calls[0] == 2 * FROZEN_PAIRS  # forward, then the recomputation in backward


def test_a_bn_replaced_after_the_fold_is_the_one_used(models):
    """As prepare_model's SyncBatchNorm conversion replaces the BN modules afterwards."""
    plain, ours, _ = models
    replacement = nn.BatchNorm2d(8).eval()
    with torch.no_grad():
        replacement.running_mean.fill_(2.0)
    for model in (plain, ours):
        model.backbone.stem.bn = copy.deepcopy(replacement)
    x = torch.randn(2, 1, 8, 8)
    torch.testing.assert_close(ours.train()(x), plain.train()(x), rtol=1e-4, atol=1e-5)


def test_a_deep_copy_is_an_independent_folded_model(models, fold_calls):
    """What the EMA hook's averaged copy needs."""
    plain, ours, _ = models
    copied = copy.deepcopy(ours)
    with torch.no_grad():
        for model in (plain, copied):
            model.backbone.stem.bn.running_mean += 1.0
    x = torch.randn(2, 1, 8, 8)
    torch.testing.assert_close(copied.train()(x), plain.train()(x), rtol=1e-4, atol=1e-5)
    assert fold_calls[0] == FROZEN_PAIRS
    assert not torch.allclose(ours.train()(x), copied(x))


class DataDependent(ConvBNReLU):
    def forward(self, x):
        x = self.bn(self.conv(x)) * torch.tensor(2.0)  # a constant the tracer stores
        return self.relu(x) if x.sum() > 0 else x


class TrainingDependent(ConvBNReLU):
    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        return x * 2 if self.training else x


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        (DataDependent, "torch.fx cannot trace it"),
        (TrainingDependent, "its forward differs between train and eval mode"),
    ],
)
def test_a_block_that_cannot_be_traced_keeps_its_forward_with_a_warning(
    block, reason, caplog, fold_calls
):
    torch.manual_seed(0)
    plain = nn.Sequential(ConvBNReLU(1, 4), block(4, 4)).eval()
    ours = copy.deepcopy(plain)
    with caplog.at_level(logging.WARNING, logger=conv_bn.__name__):
        turn_on_efficient_conv_bn_eval_for_single_model(ours)
    assert f"1 ({block.__name__}) keeps its forward, unfolded: {reason}" in caplog.text
    assert type(ours[1]) is block
    assert vars(ours[1]).keys() == vars(plain[1]).keys()  # nothing left from tracing
    x = torch.randn(2, 1, 4, 4)
    for mode in ("eval", "train"):
        torch.testing.assert_close(getattr(ours, mode)()(x), getattr(plain, mode)()(x))
    assert fold_calls[0] == 1  # the first block, in eval mode


class WithOptions(ConvBNReLU):
    """mmcv ConvModule's way: ``forward(x, activate=True, norm=True)``."""

    def forward(self, x, activate=True, norm=True):
        x = self.conv(x)
        if norm:
            x = self.bn(x)
        return self.relu(x) if activate else x


def test_a_forward_with_defaults_is_folded_for_calls_that_keep_them(fold_calls):
    torch.manual_seed(0)
    plain = WithOptions(1, 4).eval()
    ours = copy.deepcopy(plain)
    turn_on_efficient_conv_bn_eval_for_single_model(ours)
    x = torch.randn(2, 1, 4, 4)
    torch.testing.assert_close(ours(x), plain(x))
    assert fold_calls[0] == 1
    for kwargs in (dict(norm=False), dict(activate=False), dict(activate=True)):
        torch.testing.assert_close(ours(x, **kwargs), plain(x, **kwargs))
    torch.testing.assert_close(ours(x, False), plain(x, False))
    assert fold_calls[0] == 1  # other calls ran the original forward


class WithConstant(ConvBNReLU):
    def forward(self, x):
        return self.relu(self.bn(self.conv(x))) * torch.tensor(2.0)


def test_a_forward_with_a_tensor_constant_is_folded(fold_calls):
    torch.manual_seed(0)
    plain = WithConstant(1, 4).eval()
    ours = copy.deepcopy(plain)
    turn_on_efficient_conv_bn_eval_for_single_model(ours)
    x = torch.randn(2, 1, 4, 4)
    torch.testing.assert_close(ours(x), plain(x))
    assert fold_calls[0] == 1


class ConvThenBN(nn.Module):
    def __init__(self, conv: nn.Module, bn: nn.Module) -> None:
        super().__init__()
        self.conv, self.bn = conv, bn

    def forward(self, x):
        return self.bn(self.conv(x))


class BNOfASum(ConvThenBN):
    def forward(self, x):
        return self.bn(self.conv(x) + 1)


class ConvOutputUsedTwice(ConvThenBN):
    def forward(self, x):
        y = self.conv(x)
        return self.bn(y) + y


class BNPlusOne(nn.BatchNorm2d):
    def forward(self, x):
        return super().forward(x) + 1


UNFOLDED = {
    "bn of a sum": lambda: BNOfASum(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)),
    "conv output used twice": lambda: ConvOutputUsedTwice(nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2)),
    "transposed conv": lambda: ConvThenBN(nn.ConvTranspose2d(2, 2, 2), nn.BatchNorm2d(2)),
    "bn without running statistics": lambda: ConvThenBN(
        nn.Conv2d(2, 2, 1), nn.BatchNorm2d(2, track_running_stats=False)
    ),
    "bn with its own forward": lambda: ConvThenBN(nn.Conv2d(2, 2, 1), BNPlusOne(2)),
}


@pytest.mark.parametrize("case", list(UNFOLDED))
def test_pairs_the_fold_does_not_reproduce_stay_as_they_are(case, fold_calls):
    """MMEngine fails on a BN of a sum, after a transposed conv or without running statistics,
    and drops the ``+ 1`` of a BN with its own forward."""
    torch.manual_seed(0)
    plain = UNFOLDED[case]().eval()
    ours = copy.deepcopy(plain)
    turn_on_efficient_conv_bn_eval_for_single_model(ours)
    x = torch.randn(3, 2, 4, 4)
    torch.testing.assert_close(ours(x), plain(x))
    assert fold_calls[0] == 0


def test_an_unknown_submodule_is_an_error_naming_the_key_and_the_submodules():
    model = Net()
    message = (
        r"efficient_conv_bn_eval: 'backbnoe' .* of Net: backbone, head\); did you mean 'backbone'"
    )
    with pytest.raises(AttributeError, match=message):
        turn_on_efficient_conv_bn_eval(model, ["backbone", "backbnoe"])
    assert type(model.backbone) is Backbone  # nothing folded before the error
    with pytest.raises(AttributeError, match=r"of backbone: stem, layer, conv, bn\); did you"):
        turn_on_efficient_conv_bn_eval(model, "backbone.layr")
    with pytest.raises(TypeError, match=r"efficient_conv_bn_eval must be .* got 3"):
        turn_on_efficient_conv_bn_eval(model, 3)


def test_a_run_without_the_key_does_not_import_the_module():
    code = (
        "import sys, runnerx, runnerx.model, runnerx.runner; "
        "name = 'runnerx.model.efficient_conv_bn_eval'; before = name in sys.modules; "
        "runnerx.model.turn_on_efficient_conv_bn_eval; print(before, name in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "False True"


@MODELS.register_module(force=True)
class FrozenBNDigitsNet(BaseModel):
    """Net as a registered model for the digits data (8x8 images, 10 classes)."""

    def __init__(self, data_preprocessor=None) -> None:
        super().__init__(data_preprocessor)
        self.backbone = Backbone()
        self.head = nn.Linear(16, 10)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.head(self.backbone(inputs.reshape(-1, 1, 8, 8)).mean((2, 3)))
        if mode == "loss":
            return dict(loss=F.cross_entropy(logits, data_samples))
        return logits


ITERS = 4


def train_digits(work_dir, **changes):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    cfg.model = dict(type="FrozenBNDigitsNet")
    cfg.train_cfg = dict(by_epoch=False, max_iters=ITERS, val_interval=100)
    cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None
    cfg.param_scheduler = None
    cfg.log_processor = dict(by_epoch=False)
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=ITERS, by_epoch=False)
    cfg.merge_from_dict(changes)
    runner = Runner.from_cfg(cfg)
    runner.train()
    checkpoint = torch.load(Path(work_dir, f"iter_{ITERS}.pth"), weights_only=False)
    return runner, checkpoint["state_dict"]


@pytest.mark.parametrize(
    "changes",
    [
        dict(efficient_conv_bn_eval=["backbone"]),
        dict(efficient_conv_bn_eval=["backbone"], activation_checkpointing=["backbone.stem"]),
    ],
    ids=["folded", "folded-and-checkpointed"],
)
def test_a_runner_with_the_key_trains_as_the_unfolded_model(tmp_path, fold_calls, changes):
    _, expected = train_digits(tmp_path / "plain")
    assert fold_calls[0] == 0
    runner, trained = train_digits(tmp_path / "folded", **changes)
    recomputed = "activation_checkpointing" in changes  # the stem runs twice an iteration
    assert fold_calls[0] == ITERS * (FROZEN_PAIRS + recomputed)
    assert list(trained) == list(expected)
    for key, value in expected.items():
        torch.testing.assert_close(trained[key], value, rtol=1e-4, atol=1e-5, msg=key)
    assert type(runner.unwrapped_model.backbone).__name__ == "EfficientConvBNBackbone"
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert f"efficient_conv_bn_eval: {FROZEN_PAIRS + 1} conv -> bn pairs in backbone" in log
    assert "is MMEngine's; runnerx ignores it" not in log


def test_a_runner_names_the_key_for_an_unknown_submodule(tmp_path):
    with pytest.raises(AttributeError, match="efficient_conv_bn_eval: 'neck' is not a sub"):
        train_digits(tmp_path, efficient_conv_bn_eval=["neck"])
