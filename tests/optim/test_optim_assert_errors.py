"""Bad optim wrapper and scheduler settings that MMEngine rejects with ``assert`` raise errors
that ``except AssertionError`` catches, as there, and that are also the ValueError / TypeError
/ KeyError runnerx documents. mmengine-lite is the oracle: the same input raises an
AssertionError in MMEngine."""

import pytest
import torch
from torch import nn

import runnerx.optim as rx
from runnerx.optim import scheduler as rx_sched

mm = pytest.importorskip("mmengine.optim")


def sgd() -> torch.optim.SGD:
    return torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1)


# (what is wrong, how runnerx's API is called, its documented error type): each is called
# the same way on mmengine.optim, where it must fail an assert
CASES = [
    (
        "optim_wrapper without 'optimizer'",
        lambda api: api.build_optim_wrapper(nn.Linear(2, 1), dict(type="OptimWrapper")),
        ValueError,
    ),
    (
        "DefaultOptimWrapperConstructor without 'optimizer'",
        lambda api: api.DefaultOptimWrapperConstructor(dict(type="OptimWrapper")),
        ValueError,
    ),
    (
        "an OptimWrapperDict value that is no OptimWrapper",
        lambda api: api.OptimWrapperDict(gen=sgd()),
        TypeError,
    ),
    (
        "an unknown name in an OptimWrapperDict",
        lambda api: api.OptimWrapperDict(gen=api.OptimWrapper(sgd()))["disc"],
        KeyError,
    ),
    (
        "an OptimWrapperDict state of unknown names",
        lambda api: api.OptimWrapperDict(gen=api.OptimWrapper(sgd())).load_state_dict({"disc": {}}),
        KeyError,
    ),
    (
        "clip_grad that is no dict",
        lambda api: api.OptimWrapper(sgd(), clip_grad=[]),
        TypeError,
    ),
    (
        "clip_grad of nothing but its type",
        lambda api: api.OptimWrapper(sgd(), clip_grad=dict(type="norm")),
        ValueError,
    ),
    (
        "accumulative_counts=0",
        lambda api: api.OptimWrapper(sgd(), accumulative_counts=0),
        ValueError,
    ),
    (
        "eta_min and eta_min_ratio both",
        lambda api: api.CosineAnnealingLR(sgd(), T_max=4, eta_min=0, eta_min_ratio=0.1),
        ValueError,
    ),
    (
        "restart_weights of another length than periods",
        lambda api: api.CosineRestartLR(sgd(), periods=[2, 3], restart_weights=[1], eta_min=0),
        ValueError,
    ),
    (
        "ReduceOnPlateauLR with by_epoch=False",
        lambda api: api.ReduceOnPlateauLR(sgd(), monitor="loss", by_epoch=False),
        ValueError,
    ),
    (
        "ReduceOnPlateauLR with last_step=-2",
        lambda api: api.ReduceOnPlateauLR(sgd(), monitor="loss", last_step=-2),
        ValueError,
    ),
    (
        "build_iter_from_epoch with epoch_length=-1",
        lambda api: api.StepLR.build_iter_from_epoch(sgd(), step_size=2, epoch_length=-1),
        ValueError,
    ),
    (
        "build_iter_from_epoch of an iteration-based schedule",
        lambda api: api.StepLR.build_iter_from_epoch(
            sgd(), step_size=2, by_epoch=False, epoch_length=4
        ),
        ValueError,
    ),
]


class _Api:
    """runnerx's names where MMEngine has them (schedulers from the scheduler package)."""

    def __init__(self, optim, scheduler):
        self.optim, self.scheduler = optim, scheduler

    def __getattr__(self, name):
        return getattr(self.optim, name, None) or getattr(self.scheduler, name)


RUNNERX = _Api(rx, rx_sched)
MMENGINE = _Api(mm, pytest.importorskip("mmengine.optim.scheduler"))


@pytest.mark.parametrize(("what", "call", "error_type"), CASES, ids=[c[0] for c in CASES])
def test_a_setting_mmengine_asserts_on_is_an_assertion_error_here_too(what, call, error_type):
    with pytest.raises(AssertionError):
        call(MMENGINE)
    with pytest.raises(AssertionError) as caught:
        call(RUNNERX)
    assert isinstance(caught.value, error_type), what
    # the message still says what is wrong (KeyError's str would have quoted it)
    assert not str(caught.value).startswith(("'", '"'))


def test_amp_dtype_that_autocast_cannot_use_is_an_assertion_error():
    # MMEngine asserts the dtype (after asserting CUDA, so it cannot serve as oracle on CPU)
    with pytest.raises(AssertionError, match="float8"):
        rx.AmpOptimWrapper(optimizer=sgd(), dtype="float8")


def test_clip_grad_kwargs_is_none_without_clipping_as_in_mmengine():
    assert mm.OptimWrapper(sgd()).clip_grad_kwargs is None
    assert rx.OptimWrapper(sgd()).clip_grad_kwargs is None
    # with clipping it holds the clip function's arguments, as there
    clip = dict(type="value", clip_value=0.5)
    assert rx.OptimWrapper(sgd(), clip_grad=clip).clip_grad_kwargs == {"clip_value": 0.5}
    assert mm.OptimWrapper(sgd(), clip_grad=dict(clip)).clip_grad_kwargs == {"clip_value": 0.5}
