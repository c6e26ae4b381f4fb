"""Custom constructors written the MMEngine way (subclass DefaultOptimWrapperConstructor, own
paramwise_cfg keys, override add_params) give MMEngine's param groups and weights.

mmengine-lite is the oracle: the same constructor body is put on MMEngine's base class and on
runnerx's, and both build an optimizer for the same model.
"""

import copy
import re

import pytest
import torch
from mmengine.optim import DefaultOptimWrapperConstructor as MMEngineConstructor
from torch import nn

from runnerx.optim import DefaultOptimWrapperConstructor, build_optim_wrapper
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS


class TinyViT(nn.Module):
    """Named as mmpretrain's ViT: a patch embedding, numbered blocks, a norm and a head."""

    def __init__(self, depth=3):
        super().__init__()
        self.patch_embed = nn.Linear(4, 8)
        self.cls_token = nn.Parameter(torch.zeros(1, 8))
        self.layers = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 8), nn.GELU()) for _ in range(depth)
        )
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        x = self.patch_embed(x) + self.cls_token
        for layer in self.layers:
            x = x + layer(x)
        return self.head(self.norm(x))


def layer_decay(base):
    """Layer-wise lr decay as mmpretrain writes it (its own paramwise_cfg keys, a flat
    add_params that appends one group per parameter), on ``base``."""

    class LayerDecay(base):
        def add_params(self, params, module, prefix="", **kwargs):
            rate = self.paramwise_cfg["layer_decay_rate"]
            num_layers = self.paramwise_cfg["num_layers"] + 2
            for name, param in module.named_parameters():
                if not param.requires_grad:
                    continue
                if name.startswith(("patch_embed", "cls_token")):
                    layer_id = 0
                elif name.startswith("layers."):
                    layer_id = int(name.split(".")[1]) + 1
                else:
                    layer_id = num_layers - 1
                scale = rate ** (num_layers - 1 - layer_id)
                no_decay = param.ndim == 1 or name == "cls_token"
                params.append(
                    {
                        "params": [param],
                        "lr": self.base_lr * scale,
                        "weight_decay": 0.0 if no_decay else self.base_wd,
                        "lr_scale": scale,
                    }
                )

    return LayerDecay


def tutorial_layer_decay(base):
    """MMEngine's tutorial constructor (optim_wrapper.md): a recursive add_params with an
    extra keyword, halving the lr at each depth."""

    class TutorialLayerDecay(base):
        def __init__(self, optim_wrapper_cfg, paramwise_cfg=None):
            super().__init__(optim_wrapper_cfg, paramwise_cfg=None)
            self.decay_factor = paramwise_cfg.get("decay_factor", 0.5)
            super().__init__(optim_wrapper_cfg, paramwise_cfg)

        def add_params(self, params, module, prefix="", lr=None):
            lr = self.base_lr if lr is None else lr
            for _, param in module.named_parameters(recurse=False):
                params.append({"params": [param], "lr": lr})
            for name, child in module.named_children():
                child_prefix = f"{prefix}.{name}" if prefix else name
                self.add_params(params, child, child_prefix, lr=lr * self.decay_factor)

    return TutorialLayerDecay


def frozen_head_defaults(base):
    """Overrides add_params for one module kind and leaves the rest to the default rules
    through super(), which recurses through self.add_params."""

    class FrozenHead(base):
        def add_params(self, params, module, prefix="", is_dcn_module=None):
            if prefix == "head":
                for param in module.parameters():
                    params.append({"params": [param], "lr": self.paramwise_cfg["head_lr"]})
                return
            super().add_params(params, module, prefix, is_dcn_module)

    return FrozenHead


def settings(model, param_groups):
    """Per parameter name, in the order of the groups: every option of its group."""
    names = {id(param): name for name, param in model.named_parameters()}
    return [
        (names[id(param)], {key: value for key, value in group.items() if key != "params"})
        for group in param_groups
        for param in group["params"]
    ]


def model_groups(mmengine_wrapper):
    """MMEngine's param groups less the one it adds to follow the base lr (a placeholder
    tensor, ``base_param_settings``, when there are several groups)."""
    extra = getattr(mmengine_wrapper, "base_param_settings", None)
    return [group for group in mmengine_wrapper.param_groups if group is not extra]


def train(model, optim_wrapper, steps=3):
    torch.manual_seed(1)
    for _ in range(steps):
        loss = model(torch.randn(5, 4)).pow(2).mean()
        optim_wrapper.update_params(loss)


SGD = dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=0.05)
CASES = {
    "mmpretrain layer decay": (layer_decay, dict(layer_decay_rate=0.5, num_layers=3)),
    "tutorial layer decay": (tutorial_layer_decay, dict(decay_factor=0.5)),
    "super() for the rest": (
        frozen_head_defaults,
        dict(head_lr=0.0, norm_decay_mult=0.0, bias_lr_mult=2.0, custom_keys={"layers.2": {}}),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_subclass_gives_mmengines_param_groups_and_weights(case):
    make, paramwise_cfg = CASES[case]
    torch.manual_seed(0)
    model = TinyViT()
    twin = copy.deepcopy(model)
    name = "TestConstructor" + re.sub(r"\W", "", case.title())
    OPTIM_WRAPPER_CONSTRUCTORS.register_module(
        name=name, module=make(DefaultOptimWrapperConstructor), force=True
    )
    ours = build_optim_wrapper(
        model, dict(constructor=name, optimizer=dict(SGD), paramwise_cfg=dict(paramwise_cfg))
    )
    oracle = make(MMEngineConstructor)(dict(optimizer=dict(SGD)), dict(paramwise_cfg))(twin)

    assert settings(model, ours.param_groups) == settings(twin, model_groups(oracle))
    assert len(ours.param_groups) == len(list(model.parameters()))  # one group per parameter
    train(model, ours)
    train(twin, oracle)
    for (name, ours_param), oracle_param in zip(model.named_parameters(), twin.parameters()):
        assert torch.equal(ours_param, oracle_param), name


PARAMWISE = dict(
    norm_decay_mult=0.0,
    bias_lr_mult=2.0,
    bias_decay_mult=0.5,
    flat_decay_mult=0.1,
    custom_keys={"layers.1": dict(lr_mult=0.1, decay_mult=0.0), "head": dict(momentum=0.5)},
)


def test_default_add_params_appends_what_mmengines_appends():
    torch.manual_seed(0)
    model = TinyViT()
    ours, oracle = [], []
    optim_wrapper_cfg = dict(optimizer=dict(SGD))
    DefaultOptimWrapperConstructor(optim_wrapper_cfg, PARAMWISE).add_params(ours, model)
    MMEngineConstructor(optim_wrapper_cfg, PARAMWISE).add_params(oracle, model)
    assert settings(model, ours) == settings(model, oracle)
    assert len(ours) == len(list(model.parameters()))


def test_default_path_shares_groups_and_gives_the_same_settings():
    class PerParameter(DefaultOptimWrapperConstructor):  # add_params overridden: MMEngine's path
        def add_params(self, params, module, prefix="", is_dcn_module=None):
            super().add_params(params, module, prefix, is_dcn_module)

    class OnlySubclassed(DefaultOptimWrapperConstructor):  # add_params not overridden
        pass

    def effective(wrapper):
        return sorted(
            (name, (options["lr"], options["weight_decay"], options["momentum"]))
            for name, options in settings(model, wrapper.param_groups)
        )

    model = TinyViT()
    per_parameter = PerParameter(dict(optimizer=dict(SGD)), PARAMWISE)(model)
    assert len(per_parameter.param_groups) == len(list(model.parameters()))
    for constructor in (DefaultOptimWrapperConstructor, OnlySubclassed):
        shared = constructor(dict(optimizer=dict(SGD)), PARAMWISE)(model)
        assert len(shared.param_groups) < len(per_parameter.param_groups)
        assert effective(shared) == effective(per_parameter)


def test_subclass_keys_are_its_own_but_the_stock_class_refuses_unknown_keys():
    cfg = dict(optimizer=dict(SGD))
    own_keys = dict(layer_decay_rate=0.5, num_layers=3, decay_type="layer_wise")
    layer_decay(DefaultOptimWrapperConstructor)(cfg, own_keys)  # no error
    with pytest.raises(ValueError, match="unknown key 'layer_decay_rate'"):
        DefaultOptimWrapperConstructor(cfg, own_keys)
    with pytest.raises(ValueError, match="Did you mean 'norm_decay_mult'"):
        DefaultOptimWrapperConstructor(cfg, dict(norm_decay_mul=0.0))


@pytest.mark.parametrize("key", ["lr_mult", "decay_mult"])
def test_top_level_lr_mult_and_decay_mult_are_ignored_with_a_warning_as_in_mmengine(key):
    torch.manual_seed(0)
    model = TinyViT()
    paramwise_cfg = {key: 0.5, "norm_decay_mult": 0.0}
    with pytest.warns(UserWarning, match=f"paramwise_cfg.{key} is ignored.*custom_keys"):
        ours = DefaultOptimWrapperConstructor(dict(optimizer=dict(SGD)), paramwise_cfg)(model)
    oracle = MMEngineConstructor(dict(optimizer=dict(SGD)), paramwise_cfg)(model)

    def lr_and_wd(param_groups):
        return dict(
            (name, (o["lr"], o["weight_decay"])) for name, o in settings(model, param_groups)
        )

    assert lr_and_wd(ours.param_groups) == lr_and_wd(model_groups(oracle))


def test_mmengine_attributes_and_is_in():
    constructor = DefaultOptimWrapperConstructor(
        dict(type="OptimWrapper", optimizer=dict(SGD), clip_grad=None), dict(PARAMWISE)
    )
    assert constructor.optimizer_cfg == SGD
    assert constructor.optim_wrapper_cfg == dict(type="OptimWrapper", clip_grad=None)
    assert (constructor.base_lr, constructor.base_wd) == (0.1, 0.05)
    assert constructor.paramwise_cfg == PARAMWISE
    shared, other = nn.Parameter(torch.ones(1)), nn.Parameter(torch.ones(1))
    groups = [{"params": [other]}, {"params": [shared]}]
    assert constructor._is_in({"params": [shared]}, groups)
    assert not constructor._is_in({"params": [nn.Parameter(torch.ones(1))]}, groups)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10)
        self.out.weight = self.embed.weight


def test_shared_weights_through_add_params():
    make = frozen_head_defaults(DefaultOptimWrapperConstructor)
    cfg = dict(optimizer=dict(SGD))
    with pytest.raises(ValueError, match=r"embed.weight = out.weight.*bypass_duplicate=True"):
        make(cfg, dict(head_lr=0.0, bias_lr_mult=2.0))(Tied())
    model = Tied()
    with pytest.warns(UserWarning, match="'out.weight' is skipped"):
        wrapper = make(cfg, dict(head_lr=0.0, bypass_duplicate=True))(model)
    assert [name for name, _ in settings(model, wrapper.param_groups)] == [
        "embed.weight",
        "out.bias",
    ]
