"""``mmengine.optim`` and ``mmengine.optim.optimizer`` (with its submodules) with ``runnerx`` in
place of ``mmengine``: every name mmengine-lite has there, as runnerx's own object, loaded
without making ``import runnerx.optim`` slower."""

import importlib
import inspect
import subprocess
import sys

import pytest
import torch
from torch import nn

import runnerx.optim
import runnerx.optim.scheduler
from runnerx.optim import AmpOptimWrapper, OptimWrapper, OptimWrapperDict
from runnerx.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS

#: MMEngine's names runnerx does not offer: apex (NVIDIA's, unmaintained; use AmpOptimWrapper)
#: and Ascend NPU optimizers
NOT_PORTED = {"ApexOptimWrapper", "register_torch_npu_optimizers", "NPU_OPTIMIZERS"}
SUBMODULES = [
    "base",
    "builder",
    "default_constructor",
    "optimizer_wrapper",
    "amp_optimizer_wrapper",
    "optimizer_wrapper_dict",
    "zero_optimizer",
]


def mmengine_names(path):
    """A path's ``__all__``, else the classes and functions it defines and its lists of
    registered optimizers (``TORCH_OPTIMIZERS``, ...)."""
    module = importlib.import_module(path)
    if hasattr(module, "__all__"):
        return set(module.__all__) - NOT_PORTED
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and (
            getattr(value, "__module__", None) == path
            or (name.endswith("_OPTIMIZERS") and isinstance(value, list))
        )
    } - NOT_PORTED


def canonical(name):
    """The runnerx object a name of mmengine.optim must be."""
    if hasattr(runnerx.optim.scheduler, name):
        return getattr(runnerx.optim.scheduler, name)
    if name == "ZeroRedundancyOptimizer":
        from runnerx.optim.optimizer.zero_optimizer import ZeroRedundancyOptimizer

        return ZeroRedundancyOptimizer
    return {
        "BaseOptimWrapper": OptimWrapper,
        "OPTIMIZERS": OPTIMIZERS,
        "OPTIM_WRAPPER_CONSTRUCTORS": OPTIM_WRAPPER_CONSTRUCTORS,
    }.get(name, getattr(runnerx.optim, name))


@pytest.mark.parametrize("path", ["mmengine.optim", "mmengine.optim.optimizer"])
def test_every_name_is_runnerxs_own_object_and_exported(path):
    module = importlib.import_module(path.replace("mmengine", "runnerx"))
    names = mmengine_names(path)
    assert len(names) >= 9
    for name in names:
        assert getattr(module, name) is canonical(name), name
    assert names <= set(module.__all__)


@pytest.mark.parametrize("submodule", SUBMODULES)
def test_submodule_paths(submodule):
    path = f"mmengine.optim.optimizer.{submodule}"
    module = importlib.import_module(path.replace("mmengine", "runnerx"))
    names = mmengine_names(path)
    assert names
    for name in names:
        ours = getattr(module, name)
        if name.endswith("_OPTIMIZERS"):
            assert isinstance(ours, list), name
        elif name.startswith("register_"):
            assert callable(ours) and inspect.signature(ours).bind(), name
        else:
            assert ours is canonical(name), name


def test_import_cost_is_unchanged_and_names_load_when_asked_for():
    code = (
        "import sys, runnerx.optim\n"
        "heavy = ('runnerx.optim.scheduler', 'runnerx.optim.optimizers',\n"
        "         'torch.distributed.optim')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "from runnerx.optim import MultiStepLR, _ParamScheduler, OPTIMIZERS\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "from runnerx.optim.optimizer import OptimWrapper, ZeroRedundancyOptimizer\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == [
        "[]",
        "['runnerx.optim.scheduler']",
        "['runnerx.optim.scheduler', 'torch.distributed.optim']",
    ]


def test_base_optim_wrapper_is_the_base_of_every_wrapper():
    from runnerx.optim import BaseOptimWrapper

    model = nn.Linear(2, 1)
    plain = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    amp = AmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dtype="bfloat16")
    for wrapper in (plain, amp, OptimWrapperDict(a=plain)):
        assert isinstance(wrapper, BaseOptimWrapper)

    class CountingWrapper(BaseOptimWrapper):  # a custom wrapper overrides what it needs
        steps = 0

        def step(self, **kwargs):
            self.steps += 1
            super().step(**kwargs)

    counting = CountingWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    counting.update_params(model(torch.ones(1, 2)).sum())
    assert counting.steps == 1


@pytest.mark.parametrize("name", ["lr_scheduler", "momentum_scheduler", "param_scheduler"])
def test_scheduler_submodule_paths_give_runnerxs_schedulers(name):
    theirs = importlib.import_module(f"mmengine.optim.scheduler.{name}")
    ours = importlib.import_module(f"runnerx.optim.scheduler.{name}")
    scheduler_names = [
        attribute
        for attribute, value in vars(theirs).items()
        if isinstance(value, type) and value.__module__.startswith("mmengine.optim.scheduler")
    ]
    assert scheduler_names  # the oracle lists something
    for attribute in scheduler_names:
        assert getattr(ours, attribute) is getattr(runnerx.optim.scheduler, attribute), attribute
