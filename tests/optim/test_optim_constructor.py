"""DefaultOptimWrapperConstructor: paramwise_cfg rules, frozen and shared parameters."""

import pytest
import torch
from torch import nn

from runnerx import Config
from runnerx.optim import DefaultOptimWrapperConstructor, OptimWrapper, build_optim_wrapper


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3),  # plain conv
            nn.BatchNorm2d(8),
            nn.Conv2d(8, 8, 3, groups=8),  # depthwise
        )
        self.head = nn.Linear(8, 4)
        self.scale = nn.Parameter(torch.ones(8))  # a 1-D parameter of no layer
        self.frozen = nn.Linear(2, 2)
        self.frozen.requires_grad_(False)


def settings_by_name(model, optim_wrapper):
    groups = {}
    for group in optim_wrapper.param_groups:
        for param in group["params"]:
            assert id(param) not in groups, "a parameter is in two groups"
            groups[id(param)] = (group["lr"], group["weight_decay"])
    return {name: groups.get(id(param)) for name, param in model.named_parameters()}


def test_paramwise_rules_give_each_parameter_its_lr_and_weight_decay():
    model = Net()
    constructor = DefaultOptimWrapperConstructor(
        dict(optimizer=dict(type="SGD", lr=0.1, weight_decay=0.01, momentum=0.9)),
        paramwise_cfg=dict(
            bias_lr_mult=2.0,
            bias_decay_mult=0.5,
            norm_decay_mult=0.0,
            dwconv_decay_mult=0.1,
            flat_decay_mult=0.3,
            custom_keys={"head": dict(lr_mult=0.5), "head.bias": dict(lr_mult=0, decay_mult=0)},
        ),
    )
    wrapper = constructor(model)
    assert isinstance(wrapper, OptimWrapper)
    got = settings_by_name(model, wrapper)
    expected = {
        "backbone.0.weight": (0.1, 0.01),
        "backbone.0.bias": (0.2, 0.005),  # bias: lr and decay multipliers
        "backbone.1.weight": (0.1, 0.0),  # norm
        "backbone.1.bias": (0.1, 0.0),  # a norm's bias: norm rules, no bias_lr_mult
        "backbone.2.weight": (0.1, 0.001),  # depthwise conv
        "backbone.2.bias": (0.2, 0.005),  # bias rule comes before the depthwise rule
        "head.weight": (0.05, 0.01),  # custom key 'head'
        "head.bias": (0.0, 0.0),  # the longer custom key wins
        "scale": (0.1, 0.003),  # flat
        "frozen.weight": None,  # requires_grad=False: left out
        "frozen.bias": None,
    }
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        assert got[name] == (None if value is None else pytest.approx(value)), name
    # parameters with the same settings share a group; custom settings stay in the group
    assert len(wrapper.param_groups) == 7
    head_group = next(
        g for g in wrapper.param_groups if any(p is model.head.weight for p in g["params"])
    )
    assert head_group["lr_mult"] == 0.5 and head_group["momentum"] == 0.9


def test_without_paramwise_cfg_one_group_of_every_parameter_frozen_ones_too():
    model = Net()
    wrapper = build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1)))
    [group] = wrapper.param_groups
    assert group["params"] == list(model.parameters())  # MMEngine's too: 11, 2 of them frozen
    mmengine_optim = pytest.importorskip("mmengine.optim")
    theirs = mmengine_optim.build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1)))
    assert [len(g["params"]) for g in theirs.param_groups] == [len(group["params"])]


def test_a_parameter_unfrozen_during_training_is_trained_from_then_on():
    model = Net()
    wrapper = build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.1)))
    frozen_before = model.frozen.weight.detach().clone()
    wrapper.update_params(model.frozen(torch.ones(3, 2)).sum() + model.scale.sum())
    assert torch.equal(model.frozen.weight, frozen_before)  # no gradient: not stepped
    model.frozen.requires_grad_(True)  # a hook unfreezing it after a warm-up
    wrapper.update_params(model.frozen(torch.ones(3, 2)).sum())
    assert not torch.equal(model.frozen.weight, frozen_before)


def test_a_parameter_unfrozen_during_training_has_its_gradient_clipped_too():
    model = Net()
    cfg = dict(optimizer=dict(type="SGD", lr=0.1), clip_grad=dict(max_norm=1.0))
    wrapper = build_optim_wrapper(model, cfg)
    model.frozen.requires_grad_(True)  # unfrozen after the optim wrapper was built
    before = [p.detach().clone() for p in model.frozen.parameters()]
    wrapper.update_params(1000 * model.frozen(torch.ones(3, 2)).sum())
    moved = torch.cat([(p - b).flatten() for p, b in zip(model.frozen.parameters(), before)])
    # the step is lr times the gradient clipped to norm 1 (unclipped it would be ~1000x)
    assert 0 < moved.norm() <= 0.1 + 1e-6


def test_custom_key_that_matches_nothing_warns_with_its_name():
    with pytest.warns(UserWarning, match="'neck'"):
        build_optim_wrapper(
            Net(),
            dict(
                optimizer=dict(type="SGD", lr=0.1),
                paramwise_cfg=dict(custom_keys={"neck": dict(lr_mult=0.1), "head": {}}),
            ),
        )


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10, bias=False)
        self.out.weight = self.embed.weight


def test_shared_parameters_need_bypass_duplicate():
    cfg = dict(optimizer=dict(type="SGD", lr=0.1), paramwise_cfg=dict(bias_lr_mult=2.0))
    with pytest.raises(ValueError, match="bypass_duplicate=True") as info:
        build_optim_wrapper(Tied(), cfg)
    assert "'out.weight'" in str(info.value) and "'embed.weight'" in str(info.value)

    cfg["paramwise_cfg"]["bypass_duplicate"] = True
    model = Tied()
    with pytest.warns(UserWarning, match="'out.weight' is skipped"):
        wrapper = build_optim_wrapper(model, cfg)
    [group] = wrapper.param_groups
    assert len(group["params"]) == 1 and group["params"][0] is model.embed.weight


def test_ddp_style_wrapper_is_unwrapped_for_names():
    model = Net()
    wrapper = build_optim_wrapper(
        nn.DataParallel(model),
        dict(
            optimizer=dict(type="SGD", lr=0.1),
            paramwise_cfg=dict(custom_keys={"head.bias": dict(lr_mult=0.0)}),
        ),
    )
    assert settings_by_name(model, wrapper)["head.bias"] == (0.0, 0)


@pytest.mark.parametrize(
    ("optimizer", "paramwise_cfg", "message"),
    [
        (dict(type="SGD", lr=0.1), dict(norm_decay_mult=0.0), "needs|weight_decay, which is"),
        (dict(type="SGD", lr=0.1), dict(custom_keys={"head": dict(decay_mult=0)}), "weight_decay"),
        (dict(type="Adam"), dict(bias_lr_mult=2.0), "optimizer.lr, which is not set"),
        (dict(type="SGD", lr=0.1), dict(norm_decay_mul=0.0), "Did you mean 'norm_decay_mult'"),
        (dict(type="SGD", lr=0.1), dict(custom_keys={"head": 0.1}), r"custom_keys\['head'\]"),
    ],
)
def test_bad_paramwise_cfg_is_explained(optimizer, paramwise_cfg, message):
    with pytest.raises((TypeError, ValueError), match=message):
        DefaultOptimWrapperConstructor(dict(optimizer=optimizer), paramwise_cfg)


def test_missing_optimizer_is_explained():
    with pytest.raises(ValueError, match="optim_wrapper has no 'optimizer' key"):
        DefaultOptimWrapperConstructor(dict(type="OptimWrapper"))


@pytest.mark.parametrize(
    ("optimizer", "message"),
    [
        (
            dict(type="SGD", lr="1e-3"),
            r"^optim_wrapper\.optimizer\.lr must be a number, got str '1e-3' "
            r"\(write 1e-3 without quotes\)$",
        ),
        (
            dict(type="SGD", lr=0.1, weight_decay="big"),
            r"^optim_wrapper\.optimizer\.weight_decay must be a number, got str 'big'$",
        ),
        (dict(type="SGD", lr=0.1, momentum=True), r"optimizer\.momentum .* got bool True$"),
    ],
)
def test_a_setting_that_is_not_a_number_is_named_by_its_key(optimizer, message):
    cfg = Config(dict(optim_wrapper=dict(optimizer=optimizer)))
    with pytest.raises(TypeError, match=message):
        build_optim_wrapper(Net(), cfg.optim_wrapper)


def test_the_settings_of_several_optimizers_are_named_by_their_keys():
    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.generator, self.discriminator = nn.Linear(2, 2), nn.Linear(2, 1)

    cfg = Config(
        dict(
            optim_wrapper=dict(
                generator=dict(optimizer=dict(type="Adam", lr=1e-3)),
                discriminator=dict(optimizer=dict(type="Adam", lr="fast")),
            )
        )
    )
    with pytest.raises(TypeError, match=r"^optim_wrapper\.discriminator\.optimizer\.lr must"):
        build_optim_wrapper(Pair(), cfg.optim_wrapper)


@pytest.mark.parametrize("from_config", [True, False])
def test_the_optimizers_own_errors_name_its_key(from_config):
    optim_wrapper = dict(optimizer=dict(type="SGD", lr=-0.1))
    if from_config:
        optim_wrapper = Config(dict(optim_wrapper=optim_wrapper)).optim_wrapper
    with pytest.raises(ValueError) as caught:
        build_optim_wrapper(Net(), optim_wrapper)
    assert str(caught.value) == (
        "while building cfg.optim_wrapper.optimizer (type=SGD from torch.optim.sgd): "
        "Invalid learning rate: -0.1"
    )


def test_a_tensor_learning_rate_is_a_number():
    lr = torch.tensor(0.1)
    wrapper = build_optim_wrapper(Net(), dict(optimizer=dict(type="Adam", lr=lr)))
    assert wrapper.param_groups[0]["lr"] is lr
