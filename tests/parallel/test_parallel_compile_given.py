"""A model given already compiled, ``Runner(model=torch.compile(model))`` (Lightning 2.x's
form): the Runner trains the model inside and compiles it as the ``compile`` key says."""

import torch
import torch.nn.functional as F
from torch import nn
from torch._dynamo.testing import CompileCounter
from torch.utils.data import DataLoader, TensorDataset

from runnerx.model import BaseModel
from runnerx.parallel import prepare_model
from runnerx.runner import Runner


class Tiny(BaseModel):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y=None, mode="tensor"):
        logits = self.fc(x)
        return dict(loss=F.cross_entropy(logits, y)) if mode == "loss" else logits


def train(tmp_path, model, **cfg):
    x = torch.randn(8, 4, generator=torch.Generator().manual_seed(0))
    loader = DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=4)
    runner = Runner(
        model=model,
        work_dir=str(tmp_path),
        train_dataloader=loader,
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(checkpoint=None),
        cfg=cfg,
    )
    runner.train()
    return runner


def test_a_compiled_model_is_compiled_with_the_compile_keys_defaults(tmp_path, monkeypatch):
    plain = Tiny()
    given = torch.compile(plain, backend="eager")
    asked = []
    counter = CompileCounter()

    def compile_counting(function, **options):  # the defaults asked for, compiled countably
        asked.append(options)
        return torch._dynamo.optimize(counter)(function)

    monkeypatch.setattr(torch, "compile", compile_counting)
    runner = train(tmp_path, given)
    assert asked == [{}]  # compile=True: torch.compile's own defaults
    assert counter.frame_count > 0  # the training steps ran compiled
    assert runner.model is plain
    assert not any(key.startswith("_orig_mod.") for key in runner.model.state_dict())


def test_the_compile_key_sets_the_options_of_a_compiled_model(tmp_path):
    counter = CompileCounter()
    runner = train(tmp_path, torch.compile(Tiny()), compile=dict(backend=counter))
    assert counter.frame_count > 0
    assert isinstance(runner.model, Tiny)


def test_a_compiled_model_gets_a_warning_naming_the_compile_key(current_log):
    plain = Tiny()
    prepared = prepare_model(torch.compile(plain, backend="eager"))
    assert prepared is plain and plain._compiled_call_impl is not None
    assert len(current_log) == 1
    assert "compile key's defaults" in current_log[0]
    assert "compile=dict(backend=..., mode=...)" in current_log[0]
    # a compile key of the config: its options, no warning
    prepare_model(torch.compile(Tiny()), compile=dict(backend="eager"))
    assert len(current_log) == 1
