"""Lightning's scheduler dict (dict(scheduler=..., interval=..., frequency=..., monitor=...))
in param_scheduler is named as such, with how to write it here, whether built directly or by
the Runner; torch's ReduceLROnPlateau names ReduceOnPlateauLR."""

import pytest
import torch

from runnerx.optim.scheduler import build_param_schedulers
from tests.hooks.test_hooks_with_runner import make_runner

LIGHTNING = "is Lightning's scheduler dict"
INTERVAL = "interval='step' is by_epoch=False"
MONITOR = "monitor belongs to ReduceOnPlateauLR(monitor=...), where it names a validation metric"
FREQUENCY = "frequency has no key here: multiply step_size, milestones, begin and end by it"


@pytest.fixture
def optimizer():
    return torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1)


def test_the_dict_is_rewritten_with_a_note_per_key(optimizer):
    cfg = dict(scheduler=dict(type="StepLR", step_size=1), interval="step", frequency=2)
    with pytest.raises(TypeError) as caught:
        build_param_schedulers(cfg, optimizer)
    message = str(caught.value)
    assert message.startswith(f"param_scheduler {LIGHTNING} (with 'scheduler', 'interval', ")
    assert "here param_scheduler=dict(type='StepLR', step_size=1, by_epoch=False)." in message
    assert INTERVAL in message and FREQUENCY in message and MONITOR not in message


def test_a_monitored_torch_plateau_becomes_reduce_on_plateau_lr(optimizer):
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    cfg = [dict(scheduler=plateau, monitor="val_loss", frequency=1)]
    with pytest.raises(TypeError) as caught:
        build_param_schedulers(cfg, optimizer)
    message = str(caught.value)
    assert message.startswith(f"param_scheduler[0] {LIGHTNING} (with 'scheduler', 'monitor',")
    assert (
        "param_scheduler=dict(type='ReduceOnPlateauLR', monitor='<validation metric>', ...)"
        in message
    )
    assert MONITOR in message and FREQUENCY not in message  # frequency=1 changes nothing


@pytest.mark.parametrize(
    "key, value, note",
    [("frequency", 2, FREQUENCY), ("interval", "step", INTERVAL), ("monitor", "val", MONITOR)],
)
def test_a_lightning_key_given_to_a_scheduler_says_what_it_is_here(optimizer, key, value, note):
    with pytest.raises(TypeError) as caught:
        build_param_schedulers(dict(type="StepLR", step_size=1, **{key: value}), optimizer)
    assert f"; {key} is a key of Lightning's scheduler dict, not a scheduler argument: " in str(
        caught.value
    )
    assert note in str(caught.value)


def test_torchs_reduce_lr_on_plateau_names_reduce_on_plateau_lr(optimizer):
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
    with pytest.raises(TypeError, match="use runnerx's ReduceOnPlateauLR .*"):
        build_param_schedulers(plateau, optimizer)


def test_the_runner_names_the_lightning_form_when_it_is_built(tmp_path):
    cfg = dict(scheduler=dict(type="StepLR", step_size=1), interval="step", frequency=2)
    with pytest.raises(TypeError) as caught:
        make_runner(tmp_path, param_scheduler=cfg)
    message = str(caught.value)
    # the Runner's check meets 'interval' first: its value alone is known, so every key is told
    assert message.startswith(f"param_scheduler {LIGHTNING} (with 'interval')")
    assert "param_scheduler=dict(type='<scheduler>', by_epoch=False, ...)" in message
    assert INTERVAL in message and MONITOR in message and FREQUENCY in message


def test_optimizers_named_like_lightning_keys_are_still_optimizers():
    wrappers = dict(
        monitor=torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1),
        frequency=torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.1),
    )
    built = build_param_schedulers(
        dict(monitor=dict(type="StepLR", step_size=1), frequency=[]), wrappers
    )
    assert len(built["monitor"]) == 1 and built["frequency"] == []
