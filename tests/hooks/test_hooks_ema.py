"""EMAHook: averaging, begin_iter/epoch, swapping for validation, checkpoints, compiled models."""

import copy

import pytest
import torch
from torch import nn

from runnerx import Config
from runnerx.hooks import EMAHook
from runnerx.registry import HOOKS
from runnerx.registry.errors import NotRegisteredError


class TinyEMA(nn.Module):
    """The ExponentialMovingAverage contract: ``module``, ``steps``, ``update_parameters``."""

    def __init__(self, model, momentum=0.5, interval=1, device=None, update_buffers=False):
        super().__init__()
        self.module = copy.deepcopy(model).requires_grad_(False)
        self.momentum = momentum
        self.update_buffers = update_buffers
        self.register_buffer("steps", torch.tensor(0))

    @torch.no_grad()
    def update_parameters(self, model):
        for averaged, current in zip(self.module.parameters(), model.parameters()):
            if self.steps == 0:
                averaged.copy_(current)
            else:
                averaged.mul_(1 - self.momentum).add_(current, alpha=self.momentum)
        self.steps += 1


def fill(model, value):
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.fill_(value)


def values(model):
    return [p.detach().clone() for p in model.parameters()]


def same(tensors, value):
    return all(torch.all(t == value) for t in tensors)


@pytest.fixture
def model():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    fill(net, 1.0)
    return net


@pytest.fixture
def ema_runner(runner, model):
    runner.model = runner.unwrapped_model = model
    return runner


def start(runner, **kwargs):
    hook = EMAHook(ema_type=TinyEMA, **kwargs)
    hook.before_run(runner)
    hook.before_train(runner)
    return hook


def step(runner, hook, value):
    """One training iteration that leaves every weight at ``value``."""
    fill(runner.model, value)
    hook.after_train_iter(runner, 0)
    runner.iter += 1


def test_the_average_follows_the_weights_with_the_momentum(ema_runner):
    hook = start(ema_runner, momentum=0.25)
    step(ema_runner, hook, 2.0)  # the first update copies
    step(ema_runner, hook, 6.0)  # 0.75 * 2 + 0.25 * 6
    assert same(values(hook.ema_model.module), 3.0)
    assert same(values(ema_runner.model), 6.0)


def test_before_begin_iter_the_average_is_a_copy(ema_runner):
    hook = start(ema_runner, begin_iter=2)
    step(ema_runner, hook, 5.0)  # iteration 1 (< 2): copied
    assert same(values(hook.ema_model.module), 5.0) and hook.ema_model.steps == 0
    step(ema_runner, hook, 7.0)  # iteration 2: the first update (a copy), then averaging
    step(ema_runner, hook, 9.0)
    assert same(values(hook.ema_model.module), 8.0)


def test_begin_epoch_counts_epochs(ema_runner):
    hook = start(ema_runner, begin_epoch=2)
    step(ema_runner, hook, 5.0)
    assert hook.ema_model.steps == 0
    ema_runner.epoch = 1  # the second epoch
    step(ema_runner, hook, 5.0)
    assert hook.ema_model.steps == 1


@pytest.mark.parametrize("mode", ["val", "test"])
def test_evaluation_uses_the_average_and_training_weights_come_back(ema_runner, mode):
    hook = start(ema_runner)
    step(ema_runner, hook, 2.0)
    step(ema_runner, hook, 4.0)  # average 3.0, weights 4.0
    pointers = [p.data_ptr() for p in ema_runner.model.parameters()]
    getattr(hook, f"before_{mode}_epoch")(ema_runner)
    assert same(values(ema_runner.model), 3.0)
    getattr(hook, f"after_{mode}_epoch")(ema_runner, {})
    assert same(values(ema_runner.model), 4.0) and same(values(hook.ema_model.module), 3.0)
    # in place: the model's tensors are the same memory (compiled graphs stay valid)
    assert [p.data_ptr() for p in ema_runner.model.parameters()] == pointers


def test_a_second_run_swaps_in_its_own_average(ema_runner):
    """runner.val() then runner.train(): before_run builds a new average each time, and
    validation during training must swap in that one, not the first."""
    hook = start(ema_runner)
    hook.before_val_epoch(ema_runner)  # the standalone val(): swaps the first average in
    hook.after_val_epoch(ema_runner, {})
    hook.before_run(ema_runner)  # train(): a new average
    step(ema_runner, hook, 2.0)
    step(ema_runner, hook, 4.0)  # average 3.0, weights 4.0
    hook.before_val_epoch(ema_runner)
    assert same(values(ema_runner.model), 3.0)
    hook.after_val_epoch(ema_runner, {})
    assert same(values(ema_runner.model), 4.0)


class CountingSwaps(EMAHook):
    """A subclass overriding MMEngine's private swap methods, as downstream hooks may."""

    swaps = 0
    state_swaps = 0

    def _swap_ema_parameters(self):
        self.swaps += 1
        super()._swap_ema_parameters()

    def _swap_ema_state_dict(self, checkpoint):
        self.state_swaps += 1
        super()._swap_ema_state_dict(checkpoint)


def test_the_hook_points_swap_through_mmengines_private_methods(ema_runner):
    hook = CountingSwaps(ema_type=TinyEMA)
    hook.before_run(ema_runner)
    step(ema_runner, hook, 2.0)
    hook.before_val_epoch(ema_runner)
    hook.after_val_epoch(ema_runner, {})
    checkpoint = {"state_dict": ema_runner.model.state_dict()}
    hook.before_save_checkpoint(ema_runner, checkpoint)
    ema_runner._resume = True
    hook.after_load_checkpoint(ema_runner, checkpoint)
    assert (hook.swaps, hook.state_swaps) == (2, 2)


def test_a_compiled_forward_sees_the_swapped_weights(ema_runner):
    model = ema_runner.model.eval()
    ema_runner.model = torch.compile(model, backend="eager")
    ema_runner.unwrapped_model = model
    hook = start(ema_runner)
    step(ema_runner, hook, 2.0)
    step(ema_runner, hook, 4.0)
    inputs = torch.ones(2, 3)
    trained = ema_runner.model(inputs)
    reference = copy.deepcopy(model)
    fill(reference, 3.0)  # the average
    hook.before_val_epoch(ema_runner)
    averaged = ema_runner.model(inputs)
    assert torch.allclose(averaged, reference(inputs))
    assert not torch.allclose(averaged, trained)
    hook.after_val_epoch(ema_runner, {})
    assert torch.allclose(ema_runner.model(inputs), trained)


def test_a_checkpoint_holds_the_average_as_state_dict_and_resumes_exactly(ema_runner, model):
    hook = start(ema_runner)
    step(ema_runner, hook, 2.0)
    step(ema_runner, hook, 4.0)  # average 3.0, weights 4.0
    checkpoint = {"state_dict": model.state_dict()}
    hook.before_save_checkpoint(ema_runner, checkpoint)
    assert torch.all(checkpoint["state_dict"]["0.weight"] == 3.0)
    assert torch.all(checkpoint["ema_state_dict"]["module.0.weight"] == 4.0)
    assert checkpoint["ema_state_dict"]["steps"] == 2
    saved = copy.deepcopy(checkpoint)

    fresh = copy.deepcopy(model)
    fill(fresh, 0.0)
    resumed_runner = copy.copy(ema_runner)
    resumed_runner.model = resumed_runner.unwrapped_model = fresh
    resumed_runner._resume = True
    resumed = EMAHook(ema_type=TinyEMA)
    resumed.before_run(resumed_runner)
    resumed.after_load_checkpoint(resumed_runner, saved)
    fresh.load_state_dict(saved["state_dict"])  # what the Runner does after the hook
    assert same(values(fresh), 4.0) and same(values(resumed.ema_model.module), 3.0)
    assert resumed.ema_model.steps == 2


def test_loading_without_resuming_starts_the_average_from_the_weights(ema_runner, model):
    hook = start(ema_runner)
    checkpoint = {"state_dict": {k: torch.full_like(v, 7.0) for k, v in model.state_dict().items()}}
    checkpoint["ema_state_dict"] = {"module.0.weight": torch.zeros(4, 3)}  # ignored: not resuming
    hook.after_load_checkpoint(ema_runner, checkpoint)
    assert same(values(hook.ema_model.module), 7.0)


def test_resuming_from_a_checkpoint_without_an_average_warns(ema_runner, model):
    ema_runner._resume = True
    hook = start(ema_runner)
    hook.after_load_checkpoint(ema_runner, {"state_dict": model.state_dict()})
    assert "no 'ema_state_dict'" in ema_runner.logger.messages("warning")[0]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"begin_iter": 2, "begin_epoch": 1}, "set begin_iter or begin_epoch, not both"),
        ({"begin_iter": -1}, "begin_iter must be an int >= 0"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EMAHook(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"momentun": 0.1},
            r"ExponentialMovingAverage got an .*'momentun'; did you mean 'momentum'",
        ),
        ({"ema_type": "MomentumAnnealingEMA", "gama": 10}, r"'gama'; did you mean 'gamma'"),
        ({"ema_type": TinyEMA, "update_buffer": True}, r"'update_buffer'; did you mean"),
    ],
)
def test_an_argument_the_average_does_not_take_is_refused_when_the_hook_is_built(kwargs, message):
    with pytest.raises(TypeError, match=message):
        EMAHook(**kwargs)


def test_the_error_names_the_custom_hooks_key_of_the_config():
    hooks = [dict(type="EMAHook"), dict(type="EMAHook", momentun=0.1)]
    with pytest.raises(TypeError, match=r"cfg\.custom_hooks\.1 .*'momentun'"):
        HOOKS.build(Config(dict(custom_hooks=hooks)).custom_hooks[1])


def test_an_unregistered_average_is_refused_when_the_hook_is_built_naming_its_key():
    hooks = [dict(type="EMAHook", ema_type="ExponentialMovingAverag")]
    with pytest.raises(NotRegisteredError) as caught:
        HOOKS.build(Config(dict(custom_hooks=hooks)).custom_hooks[0])
    # the build's context is a note (Python 3.11+) or in front of the message (3.10)
    said = " ".join([str(caught.value), *getattr(caught.value, "__notes__", ())])
    assert "EMAHook.ema_type: 'ExponentialMovingAverag' is not registered" in said
    assert "Did you mean 'ExponentialMovingAverage'" in said
    assert "cfg.custom_hooks.0 (type='EMAHook'" in said


def test_a_begin_after_the_end_of_training_is_an_error(ema_runner):
    with pytest.raises(ValueError, match=r"begin_epoch=5 is after the last epoch \(max_epochs=3\)"):
        start(ema_runner, begin_epoch=5)


def test_loading_a_bare_state_dict_of_another_head_starts_the_average_from_what_fits(
    ema_runner, model
):
    # load_from a DDP run's saved state_dict, fine-tuned with a new head (as MMEngine allows)
    hook = start(ema_runner)
    checkpoint = {f"module.{k}": torch.full_like(v, 7.0) for k, v in model.state_dict().items()}
    checkpoint["module.2.weight"] = torch.zeros(5, 4)  # a head of 5 classes, the model's has 2
    hook.after_load_checkpoint(ema_runner, checkpoint)
    averaged = hook.ema_model.module
    assert torch.all(averaged[0].weight == 7.0) and torch.all(averaged[2].bias == 7.0)
    assert torch.all(averaged[2].weight == 1.0)  # skipped: the model's own value stays


def test_a_load_before_before_run_is_left_to_before_run(ema_runner, model):
    # runner.load_checkpoint(...) right after building the Runner: before_run then builds the
    # average from the loaded model
    hook = EMAHook(ema_type=TinyEMA)
    hook.after_load_checkpoint(ema_runner, {"state_dict": model.state_dict()})
    fill(model, 7.0)
    hook.before_run(ema_runner)
    assert same(values(hook.ema_model.module), 7.0)
