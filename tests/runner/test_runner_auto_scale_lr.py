"""auto_scale_lr with an optimizer given built (an OptimWrapper, an OptimWrapperDict, a dict of
built wrappers, ``dict(optimizer=<optimizer>)``): its param groups' lr are scaled as
MMEngine's Runner scales them, logged, and scaled once however often the Runner builds."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from runnerx.model import BaseModel
from runnerx.optim import OptimWrapper, OptimWrapperDict
from runnerx.optim.scheduler import ConstantLR
from runnerx.runner import Runner
from tests.runner.test_runner_built_objects import ToyData, ToyModel

# batches of 2 where the lr was set for 8: every lr is scaled by 0.25
SCALE = dict(enable=True, base_batch_size=8)


class TwoParts(BaseModel):
    """A model with an optimizer per part (a GAN's generator and discriminator, say)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(4, 1)
        self.second = nn.Linear(4, 1)

    def forward(self, inputs, mode="tensor"):
        return self.first(inputs), self.second(inputs)

    def train_step(self, data, optim_wrapper) -> dict:
        for name in ("first", "second"):
            loss = getattr(self, name)(data["inputs"]).pow(2).mean()
            optim_wrapper[name].update_params(loss)
        return {"loss": loss.detach()}


def runner(tmp_path: Path, model: nn.Module, optim_wrapper, **changes) -> Runner:
    kwargs = dict(
        model=model,
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(ToyData(4), batch_size=2),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=optim_wrapper,
        auto_scale_lr=SCALE,
        default_hooks=dict(checkpoint=None),
    )
    return Runner(**{**kwargs, **changes})


def log_of(run: Runner) -> str:
    return Path(run.log_dir, f"{run.timestamp}.log").read_text()


def sgd(module: nn.Module, lr: float) -> torch.optim.SGD:
    return torch.optim.SGD(module.parameters(), lr=lr)


def test_a_built_optim_wrapper_is_scaled_and_logged_once(tmp_path):
    model = ToyModel()
    run = runner(tmp_path, model, OptimWrapper(sgd(model, 0.1)))
    run.train()
    assert run.optim_wrapper.param_groups[0]["lr"] == 0.1 * 0.25  # MMEngine's value
    run.train()  # builds again: nothing is scaled twice
    assert run.optim_wrapper.param_groups[0]["lr"] == 0.1 * 0.25
    lines = [line for line in log_of(run).splitlines() if "auto_scale_lr" in line]
    assert len(lines) == 1
    assert "the lr of each param group of optim_wrapper (an optimizer given built)" in lines[0]
    assert lines[0].endswith("is scaled by 0.25: 0.1 -> 0.025")


def test_resume_before_train_scales_once(tmp_path):
    model = ToyModel()
    first = runner(tmp_path / "first", model, OptimWrapper(sgd(model, 0.1)), default_hooks={})
    first.train()  # saves epoch_1.pth, its lr scaled
    model = ToyModel()
    again = runner(
        tmp_path / "again",
        model,
        OptimWrapper(sgd(model, 0.1)),
        train_cfg=dict(by_epoch=True, max_epochs=2),
    )
    again.resume(str(tmp_path / "first" / "epoch_1.pth"))
    again.train()
    assert again.optim_wrapper.param_groups[0]["lr"] == 0.1 * 0.25


def each_lr(optim_wrapper: OptimWrapperDict) -> dict[str, list[float]]:
    return {name: [g["lr"] for g in w.param_groups] for name, w in optim_wrapper.items()}


@pytest.mark.parametrize(
    "form", ["OptimWrapperDict", "dict of wrappers", "dict of optimizers", "config and built"]
)
def test_each_optimizer_given_built_is_scaled(tmp_path, form):
    model = TwoParts()
    first, second = sgd(model.first, 0.02), sgd(model.second, 0.04)
    optim_wrapper = {
        "OptimWrapperDict": OptimWrapperDict(
            first=OptimWrapper(first), second=OptimWrapper(second)
        ),
        "dict of wrappers": dict(first=OptimWrapper(first), second=OptimWrapper(second)),
        "dict of optimizers": dict(first=dict(optimizer=first), second=dict(optimizer=second)),
        "config and built": dict(
            first=dict(optimizer=dict(type="SGD", lr=0.02)), second=OptimWrapper(second)
        ),
    }[form]
    run = runner(tmp_path, model, optim_wrapper)
    run.train()
    run.train()
    assert each_lr(run.optim_wrapper) == {"first": [0.02 * 0.25], "second": [0.04 * 0.25]}
    assert log_of(run).count("auto_scale_lr: ") == 2  # one line per optimizer


def test_an_optimizer_in_a_config_dict_is_scaled(tmp_path):
    model = ToyModel()
    run = runner(tmp_path, model, dict(optimizer=sgd(model, 0.1), clip_grad=dict(max_norm=1.0)))
    run.train()
    assert run.optim_wrapper.param_groups[0]["lr"] == 0.1 * 0.25


def test_scheduler_configs_start_from_the_scaled_lr(tmp_path):
    model = ToyModel()
    schedule = dict(type="ConstantLR", factor=0.5, by_epoch=True, end=5)
    run = runner(tmp_path, model, OptimWrapper(sgd(model, 0.1)), param_scheduler=schedule)
    run.train()
    group = run.optim_wrapper.param_groups[0]
    assert (group["initial_lr"], group["lr"]) == (0.1 * 0.25, 0.1 * 0.25 * 0.5)


def test_a_scheduler_built_on_an_optimizer_to_scale_is_refused(tmp_path):
    model = ToyModel()
    optim_wrapper = OptimWrapper(sgd(model, 0.1))
    schedule = [ConstantLR(optim_wrapper, factor=0.5)]
    run = runner(tmp_path, model, optim_wrapper, param_scheduler=schedule)
    with pytest.raises(
        RuntimeError,
        match=r"auto_scale_lr scales the lr of optim_wrapper .*"
        r"ConstantLR already built on it",
    ):
        run.train()
    assert optim_wrapper.param_groups[0]["lr"] == 0.1 * 0.5  # left as it was


def test_a_misspelt_key_is_refused_also_when_it_leaves_scaling_off(tmp_path):
    model = ToyModel()
    run = runner(tmp_path, model, OptimWrapper(sgd(model, 0.1)), auto_scale_lr=dict(enabel=True))
    with pytest.raises(ValueError, match=r"auto_scale_lr has an unknown key 'enabel'.*'enable'"):
        run.train()


def test_resuming_a_checkpoint_of_another_rank_count_says_the_lr_stays_the_checkpoints(tmp_path):
    model = ToyModel()
    first = runner(tmp_path / "first", model, OptimWrapper(sgd(model, 0.1)), default_hooks={})
    first.train()
    saved = tmp_path / "first" / "epoch_1.pth"
    checkpoint = torch.load(saved, weights_only=True)
    checkpoint["dataloader"]["world_size"] = 2  # as a 2-rank run saves it
    torch.save(checkpoint, tmp_path / "two_ranks.pth")
    for name, expected in (("epoch_1.pth", False), ("two_ranks.pth", True)):
        path = str(saved.parent / name if name == "epoch_1.pth" else tmp_path / name)
        model = ToyModel()
        again = runner(
            tmp_path / f"again_{name}",
            model,
            OptimWrapper(sgd(model, 0.1)),
            train_cfg=dict(by_epoch=True, max_epochs=2),
        )
        again.resume(path)
        warned = "auto_scale_lr is on and" in log_of(again)
        assert warned is expected, name
    assert "saved by a run of 2 ranks, this one has 1: the optimizer keeps the lr" in log_of(again)
