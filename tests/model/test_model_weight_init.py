"""init_cfg: layer initializers, override, Pretrained loading, BaseModule.init_weights order."""

import math
import pickle

import pytest
import torch
from torch import nn

from runnerx import MODELS
from runnerx.model import BaseModule, ModuleList, Sequential, initialize, weight_init


class MyConv(nn.Conv2d):
    """Matched by its base class name, 'Conv2d'."""


class Net(BaseModule):
    def __init__(self, init_cfg=None, child_cfg=None):
        super().__init__(init_cfg)
        self.conv = MyConv(2, 4, 3)
        self.fc = nn.Linear(4, 3)
        self.head = nn.Linear(3, 2)
        self.child = Sequential(nn.Linear(2, 2), init_cfg=child_cfg)


def test_constant_initialises_only_the_named_layers():
    net = Net()
    conv_before = net.conv.weight.detach().clone()
    initialize(net, dict(type="Constant", layer="Linear", val=1, bias=2))
    for linear in (net.fc, net.head, net.child[0]):
        assert linear.weight.eq(1).all() and linear.bias.eq(2).all()
    assert torch.equal(net.conv.weight, conv_before)


def test_a_layer_matches_by_its_base_class_name_and_lists_work():
    net = Net()
    initialize(
        net,
        [
            dict(type="Normal", layer="Conv2d", mean=5, std=1e-6, bias=0.5),
            dict(type="Constant", layer=["Linear"], val=0),
        ],
    )
    assert torch.allclose(net.conv.weight, torch.full_like(net.conv.weight, 5), atol=1e-4)
    assert net.conv.bias.eq(0.5).all() and net.fc.weight.eq(0).all()


def test_xavier_and_kaiming_follow_their_formulas():
    torch.manual_seed(0)
    big = nn.Linear(400, 300)
    initialize(big, dict(type="Xavier", layer="Linear", distribution="uniform", bias=0.1))
    bound = math.sqrt(6 / (400 + 300))
    assert big.weight.abs().max() <= bound and big.weight.abs().max() > 0.9 * bound
    assert big.bias.eq(0.1).all()

    initialize(big, dict(type="Kaiming", layer="Linear"))  # fan_out, relu, normal by default
    assert big.weight.std().item() == pytest.approx(math.sqrt(2 / 300), rel=0.05)
    initialize(big, dict(type="Kaiming", layer="Linear", mode="fan_in", distribution="uniform"))
    assert big.weight.abs().max() <= math.sqrt(2) * math.sqrt(3 / 400)


def test_bias_prob_sets_the_bias_whose_sigmoid_is_that_probability():
    layer = nn.Linear(2, 2)
    initialize(layer, dict(type="Normal", layer="Linear", std=0.01, bias_prob=0.01))
    assert torch.sigmoid(layer.bias).tolist() == pytest.approx([0.01, 0.01])


def test_override_initialises_a_named_child_as_a_whole():
    net = Net()
    initialize(
        net,
        dict(
            type="Constant",
            layer="Conv2d",
            val=1,
            override=[dict(name="head", type="Constant", val=3, bias=4), dict(name="fc")],
        ),
    )
    assert net.conv.weight.eq(1).all()
    assert net.head.weight.eq(3).all() and net.head.bias.eq(4).all()
    assert net.fc.weight.eq(1).all()  # a bare name takes the parent entry's initializer


def test_an_entry_without_layer_or_override_initialises_nothing():
    net = Net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    initialize(net, dict(type="Constant", val=7))
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())


@pytest.mark.parametrize(
    ("cfg", "error", "message"),
    [
        (dict(type="Norml", layer="Linear"), ValueError, "did you mean 'Normal'"),
        (dict(type="Normal", layer="Linear", sd=1), TypeError, r"takes \['mean', 'std'\]"),
        (dict(type="Xavier", layer="Linear", distribution="gauss"), ValueError, "'normal' or"),
        (dict(type="Constant", val=1, override=dict(name="tail")), ValueError, "no such child"),
        (dict(type="Constant", val=1, override=dict(type="Constant")), ValueError, "'name' key"),
        *(
            (
                dict(type="Constant", val=1, layer="Linear", override=override),
                TypeError,
                r"init_cfg.override must be a dict or a list of dicts, .* override=dict\(name=",
            )
            for override in ("head", ["head"], 3, [dict(name="head"), "fc"])
        ),
    ],
)
def test_bad_init_cfg_gets_a_clear_error(cfg, error, message):
    net = Net()
    before = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(error, match=message):
        initialize(net, cfg)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())


def save_source_weights(path, net, **extra):
    state = {f"module.{k}": v + 1 for k, v in net.state_dict().items()}  # as DDP saves them
    torch.save(dict(meta=dict(epoch=3), state_dict=state, **extra), path)
    return {k.removeprefix("module."): v for k, v in state.items()}


def test_pretrained_loads_after_the_other_entries_and_the_children(tmp_path):
    source = save_source_weights(tmp_path / "w.pth", Net())
    net = Net(
        init_cfg=[
            dict(type="Pretrained", checkpoint=str(tmp_path / "w.pth")),
            dict(type="Constant", layer="Linear", val=0),
        ],
        child_cfg=dict(type="Constant", layer="Linear", val=5),
    )
    net.init_weights()
    assert all(torch.equal(source[k], v) for k, v in net.state_dict().items())
    assert net.is_init and net.child.is_init


def test_pretrained_with_a_prefix_loads_that_part(tmp_path):
    source = save_source_weights(tmp_path / "w.pth", Net())
    child = nn.Linear(2, 2)
    initialize(
        child, dict(type="Pretrained", checkpoint=str(tmp_path / "w.pth"), prefix="child.0.")
    )
    assert torch.equal(child.weight, source["child.0.weight"])
    with pytest.raises(ValueError, match="starts with 'backbone.'"):
        initialize(
            child, dict(type="Pretrained", checkpoint=str(tmp_path / "w.pth"), prefix="backbone.")
        )


class NotAWeight:
    """Unpickling this would run code: weights_only loading refuses it."""


def test_a_missing_pretrained_checkpoint_is_named_as_init_cfgs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError) as caught:
        initialize(Net(), dict(type="Pretrained", checkpoint="nope.pth"))
    assert str(caught.value) == (
        f"init_cfg Pretrained checkpoint: checkpoint not found: nope.pth (no such file, read "
        f"from {tmp_path})"
    )


def test_pretrained_refuses_checkpoints_with_arbitrary_objects(tmp_path):
    save_source_weights(tmp_path / "evil.pth", Net(), payload=NotAWeight())
    with pytest.raises(pickle.UnpicklingError):
        initialize(Net(), dict(type="Pretrained", checkpoint=str(tmp_path / "evil.pth")))
    with pytest.raises(ValueError, match="runnerx reads local paths and http"):
        initialize(Net(), dict(type="Pretrained", checkpoint="pavi://model.pth"))


def test_init_weights_runs_once_and_reaches_base_module_containers():
    blocks = ModuleList(
        [nn.Linear(2, 2), nn.Linear(2, 2)], init_cfg=dict(type="Constant", layer="Linear", val=2)
    )
    holder = Net(child_cfg=dict(type="Constant", layer="Linear", val=3))
    holder.blocks = blocks
    holder.init_weights()
    assert blocks[1].weight.eq(2).all() and holder.child[0].weight.eq(3).all()
    nn.init.zeros_(blocks[0].weight)
    holder.init_weights()  # a second call does nothing
    assert blocks[0].weight.eq(0).all()


@pytest.fixture
def init_warnings(logged_warnings):
    """The warnings weight_init logs, caught at its own logger (whatever runs set up before)."""
    return logged_warnings(weight_init.__name__)


def test_a_layer_that_matches_no_module_is_warned_of_with_a_close_match(init_warnings):
    model = MODELS.build(dict(type="DigitsConvNet", init_cfg=dict(type="Kaiming", layer="Conv")))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    model.init_weights()
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    (message,) = init_warnings
    assert "init_cfg (type='Kaiming', layer='Conv') of DigitsConvNet matched no module" in message
    assert "Conv2d, ReLU" in message and message.endswith("did you mean 'Conv2d'?")


def test_each_name_of_a_layer_list_that_matches_nothing_gets_its_close_match(init_warnings):
    initialize(Net(), dict(type="Constant", val=1, layer=["Conv3d", "Lnear"]))
    (message,) = init_warnings
    assert "layer=['Conv3d', 'Lnear']" in message
    assert message.endswith("'Linear' for 'Lnear'?")


@pytest.mark.parametrize(
    "cfg",
    [
        dict(type="Constant", val=1, layer=["Conv2d", "GroupNorm"]),  # one name matches: fine
        dict(type="Constant", val=1),  # no layer: initialises nothing, as documented
        dict(type="Constant", val=1, layer="_ConvNd"),  # a direct base class of Conv2d
    ],
)
def test_entries_that_match_a_module_or_name_no_layer_are_not_warned_of(init_warnings, cfg):
    initialize(nn.Sequential(nn.Conv2d(1, 1, 1)), cfg)
    assert init_warnings == []
