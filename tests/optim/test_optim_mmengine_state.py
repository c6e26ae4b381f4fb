"""Optimizer state written by MMEngine loads into runnerx's optim wrappers: MMEngine's extra
``base_param_settings`` is left out, and the one param group per parameter MMEngine makes with
``paramwise_cfg`` is regrouped into runnerx's shared groups, by ``load_state_dict`` and by a
Runner resuming an MMEngine checkpoint. mmengine-lite is the oracle: training goes on to the
weights MMEngine's own resume gives."""

import copy
import uuid

import pytest
import torch
from torch import nn

from runnerx.checkpoint import load_checkpoint
from runnerx.model import BaseModel
from runnerx.optim import build_optim_wrapper
from runnerx.optim.mmengine_state import regroup_mmengine_state
from runnerx.runner import Runner
from tests.checkpoint.tiny_data import loader
from tests.optim import oracle_net

mmengine_optim = pytest.importorskip("mmengine.optim")

# no decay for biases and norms, half the lr for the last layer: 3 groups here, 10 in MMEngine
PARAMWISE = dict(
    optimizer=dict(type="AdamW", lr=0.01, weight_decay=0.05),
    paramwise_cfg=dict(
        bias_decay_mult=0.0, norm_decay_mult=0.0, custom_keys={"4.": dict(lr_mult=0.5)}
    ),
)


def interleaved_net() -> nn.Module:
    """Parameters whose settings alternate in named_parameters order."""
    torch.manual_seed(0)
    layers = [nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 4), nn.LayerNorm(4)]
    return nn.Sequential(*layers, nn.Linear(4, 2)).double()


def train(model: nn.Module, wrapper, steps: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        inputs = torch.randn(6, 3, generator=generator, dtype=torch.float64)
        wrapper.update_params(model(inputs).pow(2).mean())


def mmengine_state(model: nn.Module, cfg: dict) -> dict:
    """The optim wrapper state dict MMEngine has after 3 steps of ``model``."""
    wrapper = mmengine_optim.build_optim_wrapper(model, copy.deepcopy(cfg))
    train(model, wrapper, steps=3, seed=1)
    return wrapper.state_dict()


def test_an_mmengine_paramwise_state_dict_continues_training_as_in_mmengine():
    model = interleaved_net()
    mm_wrapper = mmengine_optim.build_optim_wrapper(model, copy.deepcopy(PARAMWISE))
    train(model, mm_wrapper, steps=3, seed=1)
    state = mm_wrapper.state_dict()
    assert "base_param_settings" in state and len(state["param_groups"]) == 10

    ours = copy.deepcopy(model)
    wrapper = build_optim_wrapper(ours, PARAMWISE)
    assert len(wrapper.param_groups) == 3
    wrapper.load_state_dict(copy.deepcopy(state))  # as from a file: no tensor shared
    assert "base_param_settings" not in wrapper.state_dict()
    train(model, mm_wrapper, steps=3, seed=2)
    train(ours, wrapper, steps=3, seed=2)
    for (name, got), expected in zip(ours.named_parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12, msg=name)


def test_an_mmengine_state_with_frozen_parameters_and_no_paramwise_cfg_continues_as_there():
    # without paramwise_cfg both hold every parameter in one group, frozen ones too (a
    # backbone's frozen_stages): the state loads as it is
    model = interleaved_net()
    model[0].requires_grad_(False)
    cfg = dict(optimizer=dict(type="AdamW", lr=0.01, weight_decay=0.05))
    mm_wrapper = mmengine_optim.build_optim_wrapper(model, copy.deepcopy(cfg))
    train(model, mm_wrapper, steps=3, seed=1)
    state = copy.deepcopy(mm_wrapper.state_dict())
    assert len(state["param_groups"][0]["params"]) == len(list(model.parameters()))

    ours = copy.deepcopy(model)
    wrapper = build_optim_wrapper(ours, cfg)
    regrouped = regroup_mmengine_state(state, wrapper.param_groups, ours)
    wrapper.load_state_dict(regrouped)
    train(model, mm_wrapper, steps=3, seed=2)
    train(ours, wrapper, steps=3, seed=2)
    for (name, got), expected in zip(ours.named_parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12, msg=name)


def test_a_paramwise_cfg_changed_since_the_mmengine_run_is_an_error_naming_the_setting():
    # MMEngine's run decayed the norms; this config does not
    state = mmengine_state(
        interleaved_net(), {**PARAMWISE, "paramwise_cfg": {"bias_decay_mult": 0.0}}
    )
    model = interleaved_net()
    wrapper = build_optim_wrapper(model, PARAMWISE)
    with pytest.raises(
        ValueError, match=r"settings of param group 0 \(lr=0\.01, weight_decay=0\.05\) than the 2"
    ):
        wrapper.load_state_dict(state)
    # given the model, the parameter is named
    with pytest.raises(ValueError, match=r"parameter '1\.weight' \(its param group 2\)"):
        regroup_mmengine_state(state, wrapper.param_groups, model)


def test_an_mmengine_state_of_other_trainable_parameters_is_an_error():
    state = mmengine_state(interleaved_net(), PARAMWISE)
    model = interleaved_net()
    model[4].bias.requires_grad_(False)
    with pytest.raises(ValueError, match="holds 10 parameters.*this optimizer has 9"):
        build_optim_wrapper(model, PARAMWISE).load_state_dict(state)


OracleNet = oracle_net.model_class(BaseModel)


def resuming_runner(work_dir, checkpoint, optim_wrapper: dict) -> Runner:
    return Runner(
        model=OracleNet(),
        work_dir=str(work_dir),
        train_dataloader=loader(shuffle=False),
        train_cfg={"by_epoch": True, "max_epochs": 2},
        optim_wrapper=optim_wrapper,
        param_scheduler=oracle_net.RESUME_SCHEDULE,
        default_hooks={"logger": {"type": "LoggerHook", "interval": 100}, "checkpoint": None},
        experiment_name=f"mmengine_state_{uuid.uuid4().hex}",
        randomness={"seed": 0},
        resume=str(checkpoint),
    )


def test_resuming_an_mmengine_paramwise_run_trains_as_mmengine_resuming_it(
    mmengine_optim_runs, tmp_path
):
    checkpoint = mmengine_optim_runs / "paramwise" / "epoch_1.pth"
    assert len(load_checkpoint(checkpoint)["optimizer"]["param_groups"]) == 8
    runner = resuming_runner(tmp_path, checkpoint, oracle_net.PARAMWISE_OPTIM)
    runner.train()
    assert len(runner.optim_wrapper.param_groups) == 2
    expected = torch.load(mmengine_optim_runs / "resumed.pth")
    got = runner.unwrapped_model.state_dict()
    assert list(got) == list(expected)
    for name, value in expected.items():  # bit for bit: MMEngine's own updates
        assert torch.equal(got[name], value), name


def test_resuming_an_mmengine_run_with_another_paramwise_cfg_names_the_parameter(
    mmengine_optim_runs, tmp_path
):
    checkpoint = mmengine_optim_runs / "paramwise" / "epoch_1.pth"
    other = {**oracle_net.PARAMWISE_OPTIM, "paramwise_cfg": {"bias_decay_mult": 0.0}}
    runner = resuming_runner(tmp_path, checkpoint, other)
    with pytest.raises(ValueError, match=r"'backbone\.1\.weight'.*weight_decay=0\.0 in the check"):
        runner.train()


def test_schedulers_resumed_from_mmengine_paramwise_state_give_mmengines_lrs():
    # MMEngine's scheduler state holds one start value per parameter; a cosine towards
    # eta_min_ratio reads them, so each shared group here must take its own parameters' value
    from mmengine.optim.scheduler import CosineAnnealingLR as MMEngineCosine

    from runnerx.optim.scheduler import CosineAnnealingLR

    model = interleaved_net()
    mm_wrapper = mmengine_optim.build_optim_wrapper(model, copy.deepcopy(PARAMWISE))
    schedule = dict(T_max=10, eta_min_ratio=0.1, by_epoch=False)
    mm_scheduler = MMEngineCosine(mm_wrapper, **schedule)
    for _ in range(3):
        train(model, mm_wrapper, steps=1, seed=1)
        mm_scheduler.step()
    states = copy.deepcopy((mm_wrapper.state_dict(), mm_scheduler.state_dict()))

    ours = copy.deepcopy(model)
    wrapper = build_optim_wrapper(ours, PARAMWISE)
    scheduler = CosineAnnealingLR(wrapper, **schedule)
    wrapper.load_state_dict(states[0])  # the optimizer first, as a resume does
    scheduler.load_state_dict(states[1])
    group_of = {id(p): g for g in wrapper.param_groups for p in g["params"]}
    mm_group_of = {id(p): g for g in mm_wrapper.param_groups for p in g["params"]}
    for _ in range(3):
        mm_scheduler.step()
        scheduler.step()
        for ours_param, theirs in zip(ours.parameters(), model.parameters(), strict=True):
            assert group_of[id(ours_param)]["lr"] == pytest.approx(
                mm_group_of[id(theirs)]["lr"], rel=1e-12
            )
