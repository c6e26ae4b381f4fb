"""OptimWrapperDict.toggle: Lightning's toggle_optimizer, so that a GAN's generator loss leaves
no gradient on the discriminator for its next step (docs/optim.md "Several optimizers")."""

import pytest
import torch
from torch import nn

from runnerx.optim import OptimWrapper, OptimWrapperDict, build_optim_wrapper

LR = 0.1


class GAN(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.generator = nn.Linear(2, 4)
        self.discriminator = nn.Linear(4, 1)


def _gan_and_wrappers():
    model = GAN()
    sgd = dict(optimizer=dict(type="SGD", lr=LR))
    return model, build_optim_wrapper(model, dict(generator=sgd, discriminator=sgd))


def _gan_iteration(model, wrappers, noise, toggle):
    """One D step then one G step (as the docs' example)."""
    fake = model.generator(noise)
    wrappers["discriminator"].update_params(model.discriminator(fake.detach()).mean())
    if toggle:
        with wrappers.toggle("generator") as gen_wrapper:
            gen_wrapper.update_params(-model.discriminator(fake).mean())
    else:
        wrappers["generator"].update_params(-model.discriminator(fake).mean())


@pytest.mark.parametrize("toggle", [True, False])
def test_the_discriminator_steps_with_exactly_its_own_fresh_gradient(toggle):
    model, wrappers = _gan_and_wrappers()
    applied = []  # D's gradient as its optimizer steps with it
    wrappers["discriminator"].optimizer.register_step_pre_hook(
        lambda *_: applied.append(model.discriminator.weight.grad.clone())
    )
    noise = torch.randn(8, 2)
    _gan_iteration(model, wrappers, noise, toggle)
    stale = model.discriminator.weight.grad  # what the G step left on D
    stale = None if stale is None else stale.clone()  # the next backward adds to it in place
    fake = model.generator(noise).detach()
    (fresh,) = torch.autograd.grad(model.discriminator(fake).mean(), model.discriminator.weight)
    _gan_iteration(model, wrappers, noise, toggle)
    if toggle:
        assert stale is None
        assert torch.equal(applied[1], fresh)
    else:  # what the examples did before: the generator loss's gradient is applied too
        assert stale is not None and stale.abs().sum() > 0
        assert torch.allclose(applied[1], fresh + stale)
        assert not torch.allclose(applied[1], fresh)
    # the generator was trained in both: the toggle took nothing from it
    assert model.generator.weight.requires_grad and model.discriminator.weight.requires_grad


def _two_optimizers_sharing_one_parameter():
    shared, own_a, own_b, frozen_b = (nn.Parameter(torch.ones(2)) for _ in range(4))
    frozen_b.requires_grad_(False)
    wrappers = OptimWrapperDict(
        a=OptimWrapper(torch.optim.SGD([shared, own_a], lr=LR)),
        b=OptimWrapper(torch.optim.SGD([shared, own_b, frozen_b], lr=LR)),
    )
    return wrappers, shared, own_a, own_b, frozen_b


def test_flags_are_off_inside_and_restored_after_frozen_stay_frozen():
    wrappers, shared, own_a, own_b, frozen_b = _two_optimizers_sharing_one_parameter()
    with wrappers.toggle("a") as wrapper:
        assert wrapper is wrappers["a"]
        # b's own parameter off; the one a holds too stays on
        assert [p.requires_grad for p in (shared, own_a, own_b, frozen_b)] == [
            True,
            True,
            False,
            False,
        ]
        (shared * own_a).sum().backward()
    assert [p.requires_grad for p in (shared, own_a, own_b, frozen_b)] == [True, True, True, False]
    assert own_b.grad is None and frozen_b.grad is None and shared.grad is not None


def test_flags_are_restored_after_an_error_in_the_block():
    wrappers, shared, own_a, own_b, frozen_b = _two_optimizers_sharing_one_parameter()
    with pytest.raises(RuntimeError, match="inside"), wrappers.toggle("b"):
        assert not own_a.requires_grad
        raise RuntimeError("inside")
    assert [p.requires_grad for p in (shared, own_a, own_b, frozen_b)] == [True, True, True, False]


def test_an_unknown_name_is_refused_and_changes_nothing():
    wrappers, _, own_a, own_b, _ = _two_optimizers_sharing_one_parameter()
    with pytest.raises(KeyError, match="no optim wrapper named 'c'"), wrappers.toggle("c"):
        pass
    assert own_a.requires_grad and own_b.requires_grad
