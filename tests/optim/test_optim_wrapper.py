"""OptimWrapper: gradient accumulation (incl. short windows), no_sync, clipping, logging."""

import subprocess
import sys
from contextlib import contextmanager

import pytest
import torch
from torch import nn

import runnerx.logging.logger as logger_module
from runnerx.logging.message_hub import MessageHub
from runnerx.optim import OptimWrapper


class RecordingHub:
    """Stands in for the MessageHub to see exactly what was logged."""

    def __init__(self):
        self.logged = []

    def update_scalar(self, key, value, count=1):
        self.logged.append((key, value))


def small_net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 1)).double()


def make_data(num_micro_batches, micro_batch=8):
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(num_micro_batches, micro_batch, 5, generator=generator).double()
    targets = torch.randn(num_micro_batches, micro_batch, 1, generator=generator).double()
    return inputs, targets


def mse(model, inputs, targets):
    return nn.functional.mse_loss(model(inputs), targets)


@pytest.mark.parametrize(
    ("max_counts", "epoch_length", "windows"),
    [
        # 4 micro-batches of 8 per update; the last window of the run is 2 long
        (10, None, [(0, 4), (4, 8), (8, 10)]),
        # epochs of 6 iterations: windows restart at the boundary, 4 + 2 per epoch
        (12, 6, [(0, 4), (4, 6), (6, 10), (10, 12)]),
    ],
)
def test_accumulation_equals_one_large_batch(max_counts, epoch_length, windows):
    inputs, targets = make_data(max_counts)
    reference = small_net()
    reference_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for start, end in windows:
        batch_x, batch_y = inputs[start:end].flatten(0, 1), targets[start:end].flatten(0, 1)
        mse(reference, batch_x, batch_y).backward()
        reference_opt.step()
        reference_opt.zero_grad()

    model = small_net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    steps = []
    optimizer.register_step_post_hook(lambda *args: steps.append(wrapper.inner_count))
    wrapper = OptimWrapper(optimizer, accumulative_counts=4)
    wrapper.initialize_count_status(model, 0, max_counts, epoch_length)
    for index in range(max_counts):
        wrapper.update_params(mse(model, inputs[index], targets[index]))

    assert steps == [end for _, end in windows]
    for got, expected in zip(model.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)
        assert got.grad is None  # zero_grad(set_to_none=True) after the last update


def test_accumulation_without_count_status_updates_every_n():
    model = small_net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    wrapper = OptimWrapper(optimizer, accumulative_counts=3)
    loss = torch.tensor(6.0, requires_grad=True)
    assert wrapper.scale_loss(loss).item() == 2.0
    updates = []
    for _ in range(7):
        wrapper.backward(wrapper.scale_loss(mse(model, *[t[0] for t in make_data(1)])))
        updates.append(wrapper.should_update())
    assert updates == [False, False, True, False, False, True, False]


def test_resume_inside_a_window_warns_in_the_log(current_log):
    model = small_net()
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=4)
    wrapper.initialize_count_status(model, 6, 20)
    [message] = current_log
    assert "training resumes at iteration 6, inside a gradient accumulation window" in message
    assert wrapper.inner_count == 6
    # the window [4, 8) continues: two more micro-steps, loss divided by the full 4
    assert wrapper.scale_loss(torch.tensor(4.0)).item() == 1.0


def test_batch_norm_with_accumulation_warns_in_the_log(current_log):
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=2)
    wrapper.initialize_count_status(model, 0, 10)
    assert len(current_log) == 1 and "the model has BatchNorm layers" in current_log[0]
    OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1)).initialize_count_status(model, 0, 9)
    assert len(current_log) == 1  # no accumulation: nothing to say


def test_an_accumulation_warning_is_printed_outside_a_run(monkeypatch, capsys):
    monkeypatch.setattr(logger_module, "_current_logger", None)
    model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=2)
    wrapper.initialize_count_status(model, 0, 10)
    assert "the model has BatchNorm layers" in capsys.readouterr().out


class FakeDDP(nn.Module):
    """A model with a no_sync() context manager that records each time it is entered."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 1)
        self.no_sync_entered = 0

    @contextmanager
    def no_sync(self):
        self.no_sync_entered += 1
        yield

    def forward(self, x):
        return self.linear(x).sum()


def test_optim_context_enters_no_sync_on_non_final_micro_steps():
    model = FakeDDP()
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=3)
    wrapper.initialize_count_status(model, 0, 7)
    entered = []
    for _ in range(7):
        before = model.no_sync_entered
        with wrapper.optim_context(model):
            loss = model(torch.randn(2, 3))
        wrapper.update_params(loss)
        entered.append(model.no_sync_entered - before)
    # windows [0, 3), [3, 6), [6, 7): the last micro-step of each syncs
    assert entered == [1, 1, 0, 1, 1, 0, 0]


def test_optim_context_without_accumulation_never_blocks_sync():
    model = FakeDDP()
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    for _ in range(3):
        with wrapper.optim_context(model):
            loss = model(torch.randn(2, 3))
        wrapper.update_params(loss)
    assert model.no_sync_entered == 0


def big_gradients(model):
    loss = model(torch.full((4, 5), 10.0).double()).sum() * 100
    return loss


def test_clip_by_norm_clips_and_logs_the_norm_as_a_tensor():
    model = small_net()
    reference = small_net()
    big_gradients(reference).backward()
    expected_norm = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in reference.parameters()])
    )

    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1), clip_grad=dict(max_norm=1.0)
    )
    hub = wrapper.message_hub = RecordingHub()
    wrapper.backward(big_gradients(model))
    wrapper.step()
    clipped = torch.linalg.vector_norm(
        torch.stack([torch.linalg.vector_norm(p.grad) for p in model.parameters()])
    )
    assert clipped.item() == pytest.approx(1.0, rel=1e-6)
    [(key, value)] = hub.logged
    assert key == "train/grad_norm"
    assert isinstance(value, torch.Tensor) and value.dim() == 0
    torch.testing.assert_close(value, expected_norm)


def test_clip_by_value():
    model = small_net()
    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1), clip_grad=dict(type="value", clip_value=0.01)
    )
    wrapper.backward(big_gradients(model))
    wrapper.step()
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    assert grads.abs().max().item() == pytest.approx(0.01)


def test_grad_norm_reaches_the_current_message_hub():
    hub = MessageHub.get_instance("test_optim_grad_norm")
    model = small_net()
    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1), clip_grad=dict(max_norm=1e9)
    )
    wrapper.update_params(big_gradients(model))
    assert hub.get_scalar("train/grad_norm").current() > 1.0


@pytest.mark.parametrize(
    ("clip_grad", "message"),
    [
        (dict(max_nrm=1.0), "Did you mean 'max_norm'"),
        (dict(type="value", max_norm=1.0), "'max_norm' is not an argument of clipping by value"),
        (dict(type="l2", max_norm=1.0), "neither 'norm' nor 'value'"),
        (dict(norm_type=2), "needs 'max_norm'"),
    ],
)
def test_bad_clip_grad_names_the_key_and_the_forms(clip_grad, message):
    model = small_net()
    with pytest.raises(ValueError, match="optim_wrapper.clip_grad") as info:
        OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), clip_grad=clip_grad)
    assert message in str(info.value)
    assert "dict(type='value', clip_value=...)" in str(info.value)


@pytest.mark.parametrize("counts", [0, -2, 1.5, 0.0, True, "2"])
def test_bad_accumulative_counts(counts):
    model = small_net()
    with pytest.raises(ValueError, match="optim_wrapper.accumulative_counts") as info:
        OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=counts)
    assert "or a float such as 2.0" in str(info.value)


@pytest.mark.parametrize("counts", [1.0, 2.0])
def test_a_whole_float_accumulative_counts_updates_as_mmengine_does(counts):
    from mmengine.optim import OptimWrapper as MMEngineOptimWrapper

    inputs, targets = make_data(4)
    trained = []
    for kind in (OptimWrapper, MMEngineOptimWrapper):
        model = small_net()
        wrapper = kind(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=counts)
        wrapper.initialize_count_status(model, 0, 4)
        steps = []
        wrapper.optimizer.register_step_post_hook(
            lambda *args, out=steps, w=wrapper: out.append(w._inner_count)
        )
        for index in range(4):
            wrapper.update_params(mse(model, inputs[index], targets[index]))
        trained.append((model, steps))
    (ours, our_steps), (mmengine, mmengine_steps) = trained
    assert our_steps == mmengine_steps == list(range(int(counts), 5, int(counts)))
    for got, expected in zip(ours.parameters(), mmengine.parameters(), strict=True):
        torch.testing.assert_close(got, expected, rtol=1e-12, atol=1e-12)


def test_lr_momentum_and_state_dict():
    model = small_net()
    optimizer = torch.optim.SGD(
        [
            {"params": model[0].parameters(), "lr": 0.5},
            {"params": model[2].parameters()},
        ],
        lr=0.1,
        momentum=0.9,
    )
    wrapper = OptimWrapper(optimizer)
    assert wrapper.get_lr() == {"base_lr": [0.1], "lr": [0.5, 0.1]}  # mmengine-lite's
    assert wrapper.get_momentum() == {"momentum": [0.9, 0.9]}
    assert wrapper.param_groups is optimizer.param_groups
    assert wrapper.defaults["lr"] == 0.1
    adam = OptimWrapper(torch.optim.Adam(model.parameters(), betas=(0.8, 0.99)))
    assert adam.get_momentum() == {"momentum": [0.8]}

    wrapper.update_params(mse(model, *[t[0] for t in make_data(1)]))
    state = wrapper.state_dict()
    other_model = small_net()
    other = OptimWrapper(
        torch.optim.SGD(
            [{"params": other_model[0].parameters()}, {"params": other_model[2].parameters()}],
            lr=0.3,
            momentum=0.9,
        )
    )
    other.load_state_dict(state)
    assert other.get_lr()["lr"] == [0.5, 0.1]
    assert len(other.optimizer.state) == len(optimizer.state)


def test_importing_optim_leaves_the_schedulers_alone():
    code = (
        "import sys, runnerx.optim; "
        "print('runnerx.optim.scheduler' in sys.modules, 'runnerx.optim.optimizers' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def test_update_params_without_accumulation_still_goes_through_overridable_steps():
    model = nn.Linear(2, 1)
    calls = []

    class Recording(OptimWrapper):
        def backward(self, loss, **kwargs):
            calls.append(("backward", kwargs))
            super().backward(loss, **kwargs)

        def step(self, **kwargs):
            calls.append(("step", kwargs))
            super().step(**kwargs)

        def zero_grad(self, **kwargs):
            calls.append(("zero_grad", kwargs))
            super().zero_grad(**kwargs)

    wrapper = Recording(torch.optim.SGD(model.parameters(), lr=0.1))
    before = model.weight.detach().clone()
    wrapper.update_params(model(torch.ones(1, 2)).sum())
    wrapper.update_params(model(torch.ones(1, 2)).sum(), zero_kwargs={"set_to_none": False})
    assert calls == [
        ("backward", {}),
        ("step", {}),
        ("zero_grad", {}),
        ("backward", {}),
        ("step", {}),
        ("zero_grad", {"set_to_none": False}),
    ]
    assert wrapper.inner_count == 2 and not torch.equal(model.weight, before)
    assert model.weight.grad is not None and not model.weight.grad.any()

    class Halving(OptimWrapper):  # its own window logic: the long path, which calls it
        def scale_loss(self, loss):
            calls.append("scale_loss")
            return loss / 2

    Halving(torch.optim.SGD(model.parameters(), lr=0.1)).update_params(
        model(torch.ones(1, 2)).sum()
    )
    assert calls[-1] == "scale_loss"
