"""A Runner built from objects: what cannot work is refused when the Runner (or the loop) is
built, naming the argument and what to pass instead; the objects MMEngine accepts still train."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

from runnerx.evaluator import BaseMetric, Evaluator
from runnerx.hooks import Hook
from runnerx.logging import LogProcessor
from runnerx.model import BaseModel
from runnerx.optim import OptimWrapper, OptimWrapperDict
from runnerx.optim.scheduler import MultiStepLR
from runnerx.runner import Runner
from runnerx.visualization import Visualizer


class ToyData(Dataset):
    def __init__(self, n: int = 16) -> None:
        generator = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=generator)
        self.y = (self.x.sum(1) > 0).long()

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> dict:
        return {"inputs": self.x[index], "labels": self.y[index]}


class ToyModel(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, inputs, labels, mode="tensor"):
        logits = self.fc(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, labels)}
        if mode == "predict":
            return [{"pred": p, "gt": t} for p, t in zip(logits.argmax(1), labels)]
        return logits


class Acc(BaseMetric):
    def process(self, data_batch, data_samples) -> None:
        self.results.extend(int(s["pred"] == s["gt"]) for s in data_samples)

    def compute_metrics(self, results: list) -> dict:
        return {"acc": sum(results) / len(results)}


class Calls(Hook):
    """Records the hook points called."""

    def __init__(self) -> None:
        self.points: list[str] = []

    def before_run(self, runner) -> None:
        self.points.append("before_run")

    def before_train(self, runner) -> None:
        self.points.append("before_train")


def arguments(tmp_path, model=None, val=False, **changes) -> dict:
    """A Runner's arguments, all objects: 2 iterations of training, validation if ``val``."""
    model = ToyModel() if model is None else model
    kwargs = dict(
        model=model,
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(ToyData(), batch_size=8),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1)),
        default_hooks=dict(checkpoint=None),
    )
    if val:
        kwargs.update(
            val_dataloader=DataLoader(ToyData(), batch_size=8), val_cfg={}, val_evaluator=[Acc()]
        )
    kwargs.update(changes)
    return kwargs


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("visualizer", Visualizer, r"visualizer .* got the class Visualizer; pass an instance"),
        ("log_processor", LogProcessor, r"log_processor .* the class LogProcessor; pass an"),
        ("visualizer", "tensorboard", r"visualizer must be a Visualizer .* but got str"),
    ],
)
def test_a_visualizer_or_log_processor_that_is_no_instance_is_refused_at_build(
    tmp_path, key, value, expected
):
    with pytest.raises(TypeError, match=expected):
        Runner(**arguments(tmp_path, **{key: value}))


def test_a_scheduler_class_is_refused_at_build(tmp_path):
    with pytest.raises(TypeError, match=r"param_scheduler\[0\] is the class MultiStepLR; pass an"):
        Runner(**arguments(tmp_path, param_scheduler=[MultiStepLR]))


def test_a_torch_scheduler_is_refused_at_build_naming_runnerx_s_own(tmp_path):
    kwargs = arguments(tmp_path)
    torch_scheduler = torch.optim.lr_scheduler.MultiStepLR(kwargs["optim_wrapper"].optimizer, [4])
    with pytest.raises(TypeError, match=r"param_scheduler is torch's .* use runnerx's MultiStepLR"):
        Runner(**kwargs, param_scheduler=torch_scheduler)


@pytest.mark.parametrize(
    "wrap",
    [nn.DataParallel, lambda module: torch.compile(nn.DataParallel(module), backend="eager")],
    ids=["DataParallel", "compiled DataParallel"],
)
def test_a_wrapped_model_is_refused_naming_the_wrapper(tmp_path, wrap):
    with pytest.raises(TypeError, match=r"already wrapped in DataParallel; pass the model itself"):
        Runner(**arguments(tmp_path, model=wrap(ToyModel())))


def build_sharded(rank, out_dir):
    """In a one-rank gloo group: the error a Runner gives a model whose block was sharded by
    ``fully_shard`` (None if it gave none)."""
    from torch.distributed.fsdp import fully_shard

    torch.distributed.init_process_group("gloo", rank=rank, world_size=1)
    model = ToyModel()
    fully_shard(model.fc)
    try:
        Runner(**arguments(out_dir, model=model))
    except TypeError as error:
        return str(error)
    return None


def test_a_model_sharded_by_fully_shard_is_refused_naming_the_sharded_module(tmp_path, spawn_ranks):
    (error,) = spawn_ranks(build_sharded, tmp_path, 1, timeout=120)
    assert error is not None and error.startswith("model is already sharded by fully_shard (at fc)")
    assert "strategy=dict(type='FSDP'" in error


class WrappingRunner(Runner):
    """Wraps the model in a wrapper without val_step (a user's ``wrap_model``)."""

    def wrap_model(self, model_wrapper_cfg, model):
        return nn.DataParallel(model)


def test_the_val_step_check_names_the_object_it_tested(tmp_path):
    runner = WrappingRunner(**arguments(tmp_path, val=True))
    with pytest.raises(TypeError, match=r"the model, DataParallel, has no val_step\(\)"):
        runner.val()


def test_a_model_without_train_step_is_refused_before_the_hooks_run(tmp_path):
    calls = Calls()
    runner = Runner(**arguments(tmp_path, model=nn.Linear(4, 2), custom_hooks=[calls]))
    with pytest.raises(TypeError, match=r"the model, Linear, has no train_step\(\).*BaseModel"):
        runner.train()
    assert calls.points == []


def test_a_scheduler_of_an_optimizer_the_run_does_not_use_is_refused(tmp_path):
    calls = Calls()
    stale = OptimWrapper(torch.optim.SGD(ToyModel().parameters(), lr=0.1))
    kwargs = arguments(
        tmp_path,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        param_scheduler=[MultiStepLR(stale, milestones=[1])],
        custom_hooks=[calls],
    )
    with pytest.raises(ValueError, match=r"param_scheduler\[0\] \(MultiStepLR\) drives another"):
        Runner(**kwargs).train()
    assert calls.points == []


class TwoNets(BaseModel):
    """A GAN-like model with two sub-modules, each with its own optimizer."""

    def __init__(self) -> None:
        super().__init__()
        self.gen = nn.Linear(4, 2)
        self.disc = nn.Linear(4, 2)

    def forward(self, inputs, labels, mode="tensor"):
        return self.gen(inputs) + self.disc(inputs)

    def train_step(self, data, optim_wrapper):
        data = self.data_preprocessor(data, True)
        logs = {}
        for name in ("gen", "disc"):
            loss = F.cross_entropy(getattr(self, name)(data["inputs"]), data["labels"])
            optim_wrapper[name].update_params(loss)
            logs[f"loss_{name}"] = loss.detach()
        return logs


def test_a_keyed_scheduler_of_the_other_optimizer_is_refused(tmp_path):
    model = TwoNets()
    wrappers = OptimWrapperDict(
        gen=OptimWrapper(torch.optim.SGD(model.gen.parameters(), lr=0.1)),
        disc=OptimWrapper(torch.optim.SGD(model.disc.parameters(), lr=0.1)),
    )
    schedulers = {
        "gen": [MultiStepLR(wrappers["disc"], milestones=[1])],
        "disc": [MultiStepLR(wrappers["disc"], milestones=[1])],
    }
    kwargs = arguments(tmp_path, model, optim_wrapper=wrappers, param_scheduler=schedulers)
    with pytest.raises(
        ValueError, match=r"param_scheduler\['gen'\]\[0\] .* optim_wrapper\['gen'\]"
    ):
        Runner(**kwargs).train()


@pytest.mark.parametrize("built", ["optimizer", "optim_wrapper"])
def test_an_optimizer_of_another_model_is_warned_of(tmp_path, built):
    optimizer = torch.optim.SGD(ToyModel().parameters())
    given = OptimWrapper(optimizer) if built == "optim_wrapper" else dict(optimizer=optimizer)
    kwargs = arguments(tmp_path, optim_wrapper=given)
    with pytest.warns(UserWarning, match=r"optim_wrapper: its optimizer holds none of the param"):
        Runner(**kwargs).train()


def test_a_model_class_is_named_with_the_cure(tmp_path):
    with pytest.raises(TypeError, match=r"got the class ToyModel; pass an instance \(ToyModel"):
        Runner(model=ToyModel, work_dir=str(tmp_path))


def test_an_evaluator_mistake_is_named_under_its_own_key(tmp_path):
    runner = Runner(**arguments(tmp_path, val=True, val_evaluator=[Acc(), Acc]))
    with pytest.raises(TypeError, match=r"^val_evaluator\[1\] must be"):
        runner.train()
    mistyped = [dict(type="Accuracy"), dict(type="Accuracy", topk_=1)]  # a metric's own error
    runner = Runner(**arguments(tmp_path / "typo", val=True, val_evaluator=mistyped))
    with pytest.raises(TypeError, match=r"^while building cfg\.val_evaluator\.1 \(type='Accur"):
        runner.train()


def test_objects_mmengine_accepts_still_train(tmp_path):
    model = ToyModel()
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    kwargs = arguments(
        tmp_path,
        model=torch.compile(model, backend="eager"),
        val=True,
        optim_wrapper=wrapper,
        param_scheduler=[
            MultiStepLR(wrapper, milestones=[1], gamma=0.5),
            MultiStepLR(wrapper.optimizer, milestones=[1], gamma=0.5),
        ],
        val_evaluator=Evaluator([Acc()]),
        visualizer=Visualizer(name="built_objects", save_dir=str(tmp_path / "vis")),
        log_processor=LogProcessor(window_size=2),
    )
    before = model.fc.weight.detach().clone()
    runner = Runner(**kwargs)
    runner.train()
    assert not torch.equal(model.fc.weight, before)
    assert runner.optim_wrapper.get_lr()["lr"] == [pytest.approx(0.025)]
    assert "acc" in runner.val()
