"""OptimWrapperDict: several optimizers (a GAN's generator and discriminator)."""

import pytest
import torch
from torch import nn

from runnerx.config import Config
from runnerx.optim import OptimWrapper, OptimWrapperDict, build_optim_wrapper


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Linear(2, 4)
        self.discriminator = nn.Linear(4, 1)


OPTIM_CFG = dict(
    generator=dict(optimizer=dict(type="SGD", lr=0.01, momentum=0.9)),
    discriminator=dict(optimizer=dict(type="Adam", lr=0.001, betas=(0.5, 0.999))),
)


def test_built_from_one_config_per_sub_module():
    model = GAN()
    wrappers = build_optim_wrapper(model, Config(dict(optim_wrapper=OPTIM_CFG)).optim_wrapper)
    assert isinstance(wrappers, OptimWrapperDict) and isinstance(wrappers, OptimWrapper)
    assert list(wrappers) == ["generator", "discriminator"] and len(wrappers) == 2
    generator_params = wrappers["generator"].param_groups[0]["params"]
    assert [id(p) for p in generator_params] == [id(p) for p in model.generator.parameters()]
    assert wrappers.get_lr() == {"generator.lr": [0.01], "discriminator.lr": [0.001]}
    assert wrappers.get_momentum() == {
        "generator.momentum": [0.9],
        "discriminator.momentum": [0.5],
    }
    assert set(wrappers.param_groups) == {"generator", "discriminator"}
    assert "generator" in wrappers and "encoder" not in wrappers
    assert dict(wrappers.items())["discriminator"] is wrappers["discriminator"]


def test_each_wrapper_updates_its_own_parameters():
    model = GAN()
    wrappers = build_optim_wrapper(model, OPTIM_CFG)
    before = model.discriminator.weight.detach().clone()
    fake = model.generator(torch.randn(3, 2))
    wrappers["generator"].update_params(-model.discriminator(fake).mean())
    assert torch.equal(model.discriminator.weight, before)  # not the discriminator's step
    assert model.discriminator.weight.grad is not None
    wrappers.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_state_dict_per_name_round_trips():
    model = GAN()
    wrappers = build_optim_wrapper(model, OPTIM_CFG)
    wrappers["discriminator"].update_params(model.discriminator(torch.randn(3, 4)).mean())
    state = wrappers.state_dict()
    assert set(state) == {"generator", "discriminator"}
    other = build_optim_wrapper(GAN(), OPTIM_CFG)
    other.load_state_dict(state)
    assert len(other["discriminator"].optimizer.state) == 2
    with pytest.raises(KeyError, match="encoder"):
        other.load_state_dict({"encoder": {}})


@pytest.mark.parametrize("method", ["update_params", "backward", "step"])
def test_single_optimizer_verbs_say_which_to_use(method):
    wrappers = build_optim_wrapper(GAN(), OPTIM_CFG)
    with pytest.raises(NotImplementedError, match=r"optim_wrapper\['generator'\]\." + method):
        getattr(wrappers, method)(torch.tensor(1.0))


def test_optim_context_is_refused():
    model = GAN()
    wrappers = build_optim_wrapper(model, OPTIM_CFG)
    with pytest.raises(NotImplementedError, match="optim_context"):
        wrappers.optim_context(model)


def test_unknown_name_and_unknown_sub_module():
    wrappers = build_optim_wrapper(GAN(), OPTIM_CFG)
    with pytest.raises(KeyError, match="Did you mean 'generator'"):
        wrappers["generater"]
    with pytest.raises(
        ValueError, match=r"optim_wrapper.encoder configures .* has none by that name"
    ):
        build_optim_wrapper(GAN(), dict(encoder=dict(optimizer=dict(type="SGD", lr=0.1))))


def test_built_wrappers_are_taken_as_they_are():
    model = GAN()
    generator = OptimWrapper(torch.optim.SGD(model.generator.parameters(), lr=0.1))
    wrappers = build_optim_wrapper(model, dict(gen=generator))
    assert wrappers["gen"] is generator
    with pytest.raises(TypeError, match="holds OptimWrappers"):
        OptimWrapperDict(gen=torch.optim.SGD(model.generator.parameters(), lr=0.1))
