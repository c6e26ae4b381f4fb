"""``base_lr`` as MMEngine reports it: ``get_lr()`` has it when the optimizer has several param
groups, and the Runner logs it as ``train/base_lr`` (before ``train/lr``) at every iteration,
following the schedulers. mmengine-lite is the oracle, for the wrappers and for whole runs."""

import json
import uuid

import pytest
import torch

import runnerx.optim
from runnerx.model import BaseModel
from runnerx.optim import OptimWrapper, OptimWrapperDict
from runnerx.runner import Runner
from tests.checkpoint.tiny_data import loader
from tests.optim import oracle_net

mmengine_optim = pytest.importorskip("mmengine.optim")


def sgd(lrs: list[float | None], default: float) -> torch.optim.SGD:
    """One param group per entry of ``lrs`` (None: the optimizer's default lr)."""
    groups = []
    for lr in lrs:
        group = {"params": [torch.nn.Parameter(torch.zeros(2))]}
        if lr is not None:
            group["lr"] = lr
        groups.append(group)
    return torch.optim.SGD(groups, lr=default, momentum=0.9)


@pytest.mark.parametrize(
    "lrs",
    [
        [None],  # one group: no base_lr
        [0.01, None, 0.2],  # the first group has a multiplier: base_lr is the default's
        [None, 0.5],
    ],
)
def test_get_lr_reports_base_lr_as_mmengine_does(lrs):
    ours = OptimWrapper(sgd(lrs, default=0.1))
    theirs = mmengine_optim.OptimWrapper(sgd(lrs, default=0.1))
    assert ours.get_lr() == theirs.get_lr()
    assert list(ours.get_lr()) == list(theirs.get_lr())  # base_lr first
    assert ours.get_momentum() == theirs.get_momentum()
    assert "base_param_settings" not in ours.state_dict()


def test_an_optim_wrapper_dict_prefixes_base_lr_as_mmengine_does():
    def wrappers(module):
        return module.OptimWrapperDict(
            generator=module.OptimWrapper(sgd([0.01, None], default=0.1)),
            discriminator=module.OptimWrapper(sgd([None], default=0.2)),
        )

    ours, theirs = wrappers(runnerx.optim), wrappers(mmengine_optim)
    assert isinstance(ours, OptimWrapperDict)
    assert ours.get_lr() == theirs.get_lr()
    assert list(ours.get_lr()) == list(theirs.get_lr())


OracleNet = oracle_net.model_class(BaseModel)


@pytest.mark.parametrize("name", list(oracle_net.LR_CURVES))
def test_a_run_logs_base_lr_and_lr_at_every_iteration_as_mmengine(
    mmengine_optim_runs, tmp_path, name
):
    expected = json.loads((mmengine_optim_runs / "lr_curves.json").read_text())[name]
    paramwise_cfg, schedule = oracle_net.LR_CURVES[name]
    runner = Runner(
        model=OracleNet(),
        work_dir=str(tmp_path),
        train_dataloader=loader(shuffle=False),
        train_cfg={"by_epoch": True, "max_epochs": 3},
        optim_wrapper=oracle_net.lr_curve_optim(paramwise_cfg),
        param_scheduler=schedule,
        default_hooks={"logger": {"type": "LoggerHook", "interval": 100}, "checkpoint": None},
        experiment_name=f"base_lr_{uuid.uuid4().hex}",
        randomness={"seed": 0},
    )
    runner.train()
    scalars = runner.message_hub.log_scalars
    got = {key: scalars[key].state_dict()["values"] for key in scalars if key.endswith("lr")}
    assert list(got) == list(expected) == ["train/base_lr", "train/lr"]
    assert len(got["train/lr"]) == 12
    assert got["train/lr"] == expected["train/lr"]
    if name == "backbone-lr-mult-cosine":  # a group at optimizer.lr: MMEngine's values exactly
        assert got["train/base_lr"] == expected["train/base_lr"]
    else:
        assert got["train/base_lr"] == pytest.approx(expected["train/base_lr"], rel=1e-12)
