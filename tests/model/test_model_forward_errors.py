"""Errors from forward that the batch's form caused get a note saying so: samples left in a
list by pseudo_collate (the default collate_fn), batch keys that are not forward's
parameters. Errors with other causes get none."""

import re

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from runnerx.data import pseudo_collate
from runnerx.model import BaseModel


class Classifier(BaseModel):
    """A Lightning-style port: forward(inputs, data_samples=None, mode='tensor')."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(inputs)
        if mode == "loss":
            return dict(loss=F.cross_entropy(logits, data_samples))
        return dict(pred_score=logits.softmax(-1), gt_label=data_samples)


class Reshaping(Classifier):
    def forward(self, inputs, data_samples=None, mode="tensor"):
        return super().forward(inputs.reshape(-1, 4), data_samples, mode)


def samples(n=6):
    return [dict(inputs=torch.randn(4), data_samples=torch.tensor(i % 3)) for i in range(n)]


def notes(error: pytest.ExceptionInfo) -> list[str]:
    return getattr(error.value, "__notes__", [])


needs_notes = pytest.mark.skipif(
    not hasattr(BaseException, "add_note"), reason="exception notes need Python 3.11+"
)


@needs_notes
@pytest.mark.parametrize("model", [Classifier(), Reshaping()], ids=["TypeError", "AttributeError"])
def test_unstacked_samples_get_a_note_naming_the_key_and_the_collate_fn(model, fake_optim_wrapper):
    batch = pseudo_collate(samples())
    with pytest.raises((TypeError, AttributeError)) as error:
        model.train_step(batch, fake_optim_wrapper(model))
    (note,) = notes(error)
    assert note.startswith(
        "the batch's 'inputs' is a list of 6 tensors of shape (4,), not one stacked tensor: "
        "the dataloader's collate_fn (pseudo_collate when the config names none"
    )
    assert "collate_fn=dict(type='default_collate')" in note
    assert "data_preprocessor" in note


@needs_notes
def test_unstacked_positional_items_are_named_by_position():
    tuple_samples = [(sample["inputs"], sample["data_samples"]) for sample in samples(3)]
    with pytest.raises(TypeError) as error:
        Classifier().val_step(pseudo_collate(tuple_samples))
    (note,) = notes(error)
    assert note.startswith("the batch's item 0 is a tuple of 3 tensors of shape (4,)")


@needs_notes
@pytest.mark.parametrize(("step", "mode"), [("train_step", "loss"), ("val_step", "predict")])
def test_batch_keys_that_are_not_forward_parameters_get_a_note_with_the_convention(
    step, mode, fake_optim_wrapper
):
    model = Classifier()
    batch = dict(x=torch.randn(2, 4), y=torch.tensor([0, 1]))
    args = (fake_optim_wrapper(model),) if step == "train_step" else ()
    with pytest.raises(TypeError, match="unexpected keyword argument 'x'") as error:
        getattr(model, step)(batch, *args)
    assert notes(error) == [
        "the batch is a dict with keys ['x', 'y'], which BaseModel passes to forward as "
        f"keyword arguments (forward(**batch, mode={mode!r})), but they do not match "
        "Classifier.forward(inputs, data_samples=None, mode='tensor'); return "
        "dict(inputs=..., data_samples=...) from the dataset (the convention), or name "
        "forward's parameters after the batch's keys"
    ]


@needs_notes
def test_too_many_positional_items_get_a_note():
    batch = (torch.randn(2, 4), torch.tensor([0, 1]), torch.zeros(2))
    with pytest.raises(TypeError) as error:
        Classifier().val_step(batch)
    (note,) = notes(error)
    assert note.startswith(
        "the batch is a tuple of 3 items, which BaseModel passes to forward positionally "
        "(forward(*batch, mode='predict'))"
    )


def test_errors_with_other_causes_get_no_note(fake_optim_wrapper):
    model = Classifier()
    wrong_width = dict(inputs=torch.randn(2, 5), data_samples=torch.tensor([0, 1]))
    with pytest.raises(RuntimeError) as error:
        model.val_step(wrong_width)
    assert notes(error) == []
    # a TypeError about a list, raised by a forward whose batch holds no list of tensors
    bad_labels = dict(inputs=torch.randn(2, 4), data_samples=[0, 1])
    with pytest.raises(TypeError, match="not list") as error:
        model.train_step(bad_labels, fake_optim_wrapper(model))
    assert notes(error) == []


def test_a_bare_tensor_batch_gets_the_dataset_cure():
    # DataLoader(x) over a tensor: each batch is a bare tensor, with no argument names
    with pytest.raises(TypeError, match=r"returned Tensor \(a DataLoader over a bare tensor.*"):
        Classifier().val_step(torch.randn(2, 4))
    with pytest.raises(TypeError, match=r"DataLoader\(TensorDataset\(x\)\) for forward\(x"):
        Classifier().test_step(torch.randn(2, 4))


@pytest.mark.parametrize(
    ("attribute", "cure"),
    [
        ("log", r"update_scalar\('train/<name>', value\)"),
        ("device", r"self.data_preprocessor.device"),
        ("current_epoch", r"get_info\('epoch'\)"),
        ("global_step", r"get_info\('iter'\)"),
    ],
)
def test_a_lightning_attribute_in_forward_gets_a_note_with_the_runnerx_way(attribute, cure):
    class Lit(Classifier):
        def forward(self, inputs, data_samples=None, mode="tensor"):
            getattr(self, attribute)
            return super().forward(inputs, data_samples, mode)

    with pytest.raises(AttributeError, match=f"no attribute '{attribute}'") as error:
        Lit().val_step([torch.randn(2, 4)])
    assert len(notes(error)) == 1
    assert notes(error)[0].startswith(f"self.{attribute} is a LightningModule attribute")
    assert re.search(cure, notes(error)[0])


def test_another_missing_attribute_gets_no_lightning_note():
    class Typo(Classifier):
        def forward(self, inputs, data_samples=None, mode="tensor"):
            return self.fcc(inputs)

    with pytest.raises(AttributeError, match="no attribute 'fcc'") as error:
        Typo().val_step([torch.randn(2, 4)])
    assert notes(error) == []
