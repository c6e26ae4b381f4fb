"""Exact resume with a DataLoader the user's script built (``DataLoader(ds, shuffle=True)``):
its RandomSampler's order is restored from the checkpoint, mid-epoch included."""

import uuid
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, Sampler

from runnerx.checkpoint import load_checkpoint, save_checkpoint
from runnerx.hooks import Hook
from runnerx.model import BaseModel
from runnerx.runner import Runner


class Noisy(Dataset):
    """32 samples of 4 features; each read adds noise drawn from the global torch RNG (a random
    augmentation), so reading a batch again moves the random stream the model also draws on."""

    def __init__(self) -> None:
        self.x = torch.randn(32, 4, generator=torch.Generator().manual_seed(0))
        self.y = (self.x.sum(1) > 0).long()

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> dict:
        return {"inputs": self.x[index] + 0.1 * torch.randn(4), "labels": self.y[index]}


class Net(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.drop = nn.Dropout(0.2)

    def forward(self, inputs, labels, mode="tensor"):
        logits = self.fc(self.drop(inputs))
        return {"loss": nn.functional.cross_entropy(logits, labels)} if mode == "loss" else logits


class Interrupted(Exception):
    """Stands for the process being killed."""


class InterruptAt(Hook):
    priority = "LOWEST"

    def __init__(self, at: int) -> None:
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            raise Interrupted


class GlobalShuffle(Sampler):
    """A user's own sampler: a new random order (global RNG) at every pass."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __iter__(self):
        return iter(torch.randperm(self.size).tolist())

    def __len__(self) -> int:
        return self.size


def loader(kind: str) -> DataLoader:
    data = Noisy()
    if kind == "own_generator":
        return DataLoader(
            data, batch_size=8, shuffle=True, generator=torch.Generator().manual_seed(3)
        )
    if kind == "workers":  # their noise is seeded from the loader's generator
        return DataLoader(data, batch_size=8, shuffle=True, num_workers=2)
    if kind == "ordered":
        return DataLoader(data, batch_size=8)
    if kind == "own_sampler":
        return DataLoader(data, batch_size=8, sampler=GlobalShuffle(len(data)))
    return DataLoader(data, batch_size=8, shuffle=True)


def train(work_dir: Path, kind: str, by_epoch: bool, checkpoint: dict, at=None, resume=False):
    """A run of 3 epochs of 4 batches (or 10 iterations), stopped after iteration ``at``."""
    train_cfg = (
        {"by_epoch": True, "max_epochs": 3} if by_epoch else {"by_epoch": False, "max_iters": 10}
    )
    torch.manual_seed(0)  # the same initial weights in each run
    runner = Runner(
        model=Net(),
        work_dir=str(work_dir),
        train_dataloader=loader(kind),
        train_cfg=train_cfg,
        optim_wrapper={"optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9}},
        default_hooks={"checkpoint": {"type": "CheckpointHook", **checkpoint}},
        custom_hooks=[] if at is None else [InterruptAt(at)],
        experiment_name=f"built_loader_{uuid.uuid4().hex}",
        randomness={"seed": 1},
        resume=resume,
    )
    if at is not None:
        with pytest.raises(Interrupted):
            runner.train()
        return None
    runner.train()
    optimizer = runner.optim_wrapper.optimizer
    momenta = [optimizer.state[p]["momentum_buffer"] for p in runner.model.parameters()]
    return runner, [*runner.model.state_dict().values(), *momenta]


MID_PASS = {"by_epoch": False, "interval": 3}  # iter_6 is 2 batches into the second pass


@pytest.mark.parametrize("kind", ["shuffle", "own_generator", "workers", "ordered"])
@pytest.mark.parametrize(
    ("by_epoch", "checkpoint"),
    [(True, MID_PASS), (False, MID_PASS), (True, {"interval": 1})],  # the last: epoch_1.pth
    ids=["epoch_mid", "iter_mid", "epoch_end"],
)
def test_a_resumed_run_ends_bit_for_bit_as_the_unbroken_one(tmp_path, kind, by_epoch, checkpoint):
    """Weights and momentum, interrupted after iteration 7 and resumed from the newest
    checkpoint, as in the unbroken run."""
    _, expected = train(tmp_path / "straight", kind, by_epoch, checkpoint)
    train(tmp_path / "resumed", kind, by_epoch, checkpoint, at=7)
    runner, resumed = train(tmp_path / "resumed", kind, by_epoch, checkpoint, resume=True)
    for want, got in zip(expected, resumed, strict=True):
        assert torch.equal(want, got)
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "WARNING - resume:" not in log


def test_a_sampler_runnerx_cannot_restore_is_warned_of_at_a_mid_pass_resume(tmp_path):
    train(tmp_path, "own_sampler", True, MID_PASS, at=7)
    runner, _ = train(tmp_path, "own_sampler", True, MID_PASS, resume=True)
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    (warning,) = [line for line in log.splitlines() if "WARNING - resume:" in line]
    assert "GlobalShuffle" in warning
    assert "the rest of epoch 2 reads a new order" in warning
    assert "sampler=dict(type='DefaultSampler', shuffle=True)" in warning


def test_a_checkpoint_without_generator_states_still_resumes_and_says_the_order_is_new(tmp_path):
    """An older runnerx saved no generator states: the run resumes as it did then."""
    train(tmp_path, "shuffle", False, MID_PASS, at=7)
    path = tmp_path / "iter_6.pth"
    checkpoint = load_checkpoint(str(path))
    del checkpoint["dataloader"]["generator_states"]
    save_checkpoint(checkpoint, str(path))
    runner, _ = train(tmp_path, "shuffle", False, MID_PASS, resume=True)
    assert runner.iter == 10
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    (warning,) = [line for line in log.splitlines() if "WARNING - resume:" in line]
    assert "holds no state of the random generator" in warning
    assert "the rest of pass 2 reads a new order" in warning
