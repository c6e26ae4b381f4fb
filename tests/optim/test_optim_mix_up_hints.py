"""An optimizer config that mixes up the SGD and Adam families (``momentum=`` for Adam,
``betas=`` for SGD, ``nesterov=`` for Adam) is refused with what that optimizer takes instead."""

import pytest
from torch import nn

from runnerx.optim import build_optim_wrapper


@pytest.mark.parametrize(
    "optimizer, hint",
    [
        (
            dict(type="Adam", lr=0.001, momentum=0.9),
            "Adam's momentum is the first value of betas: betas=(0.9, 0.999) is a momentum of "
            "0.9 (0.999 is the decay of the squared gradients' average).",
        ),
        (
            dict(type="SGD", lr=0.1, betas=(0.9, 0.999)),
            "SGD's momentum is one number: momentum=0.9 (Adam's betas[0]).",
        ),
        (
            dict(type="AdamW", lr=0.001, nesterov=True),
            "Adam with Nesterov momentum is type='NAdam'.",
        ),
        (dict(type="SGD", lr=0.1, lrr=0.1), "Did you mean 'lr'?"),  # no mix-up: a typo
    ],
    ids=["adam_momentum", "sgd_betas", "adamw_nesterov", "typo"],
)
def test_a_mixed_up_optimizer_key_says_what_the_optimizer_takes(optimizer, hint):
    key = next(key for key in optimizer if key not in ("type", "lr"))
    with pytest.raises(TypeError) as error:
        build_optim_wrapper(nn.Linear(2, 1), dict(optimizer=optimizer))
    message = str(error.value)
    name = optimizer["type"]
    assert message.startswith(
        f"optim_wrapper.optimizer has {key!r}, which {name} does not take (it takes: lr,"
    )
    assert message.endswith(f"). {hint}")
