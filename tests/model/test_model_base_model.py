"""BaseModel: train/val/test steps, loss parsing, the data preprocessor, error messages."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from runnerx.model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor
from runnerx.registry import MODELS


class TinyClassifier(BaseModel):
    """An MMEngine-style model: forward(inputs, data_samples=None, mode='tensor')."""

    def __init__(self, data_preprocessor=None, outputs=None):
        super().__init__(data_preprocessor)
        self.fc = nn.Linear(4, 3)
        self.outputs = outputs  # what 'loss' mode returns instead of the real losses

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(inputs)
        if mode == "loss":
            if self.outputs is not None:
                return self.outputs(logits)
            loss = F.cross_entropy(logits, data_samples)
            accuracy = (logits.argmax(1) == data_samples).float().mean()
            return dict(loss_cls=loss, acc=accuracy)
        if mode == "predict":
            return [
                dict(pred_label=int(p), gt_label=int(g))
                for p, g in zip(logits.argmax(1), data_samples)
            ]
        return logits


def batch(size=8):
    generator = torch.Generator().manual_seed(0)
    return dict(
        inputs=torch.randn(size, 4, generator=generator),
        data_samples=torch.randint(0, 3, (size,), generator=generator),
    )


def test_train_step_updates_parameters_and_returns_detached_log_vars(fake_optim_wrapper):
    model = TinyClassifier()
    before = model.fc.weight.detach().clone()
    log_vars = model.train_step(batch(), fake_optim_wrapper(model))

    assert not torch.equal(model.fc.weight, before)
    assert list(log_vars) == ["loss", "loss_cls", "acc"]
    for value in log_vars.values():
        assert isinstance(value, torch.Tensor) and value.dim() == 0
        assert not value.requires_grad
    assert torch.equal(log_vars["loss"], log_vars["loss_cls"])


def test_train_step_runs_preprocessor_and_forward_inside_optim_context(fake_optim_wrapper):
    events = []

    class RecordingPreprocessor(BaseDataPreprocessor):
        def forward(self, data, training=False):
            events.append(f"preprocess training={training}")
            return super().forward(data, training)

    model = TinyClassifier(data_preprocessor=RecordingPreprocessor())
    model.train_step(batch(), fake_optim_wrapper(model, events=events))
    assert events == ["enter", "preprocess training=True", "exit", "update"]

    events.clear()
    model.val_step(batch())
    model.test_step(batch())
    assert events == ["preprocess training=False", "preprocess training=False"]


def test_loss_decreases_over_train_steps(fake_optim_wrapper):
    torch.manual_seed(0)
    model = TinyClassifier()
    wrapper = fake_optim_wrapper(model, lr=0.5)
    data = batch(32)
    data["data_samples"] = data["inputs"][:, :3].argmax(1)  # learnable labels
    losses = [model.train_step(data, wrapper)["loss"] for _ in range(30)]
    assert losses[-1] < 0.5 * losses[0]


def test_val_and_test_step_return_what_predict_returns():
    model = TinyClassifier()
    predictions = model.val_step(batch(5))
    assert len(predictions) == 5 and set(predictions[0]) == {"pred_label", "gt_label"}
    assert model.test_step(batch(5)) == predictions


def test_parse_losses_sums_loss_keys_only_and_keeps_order():
    model = TinyClassifier()
    losses = dict(
        acc=torch.tensor(0.5),
        loss_a=torch.tensor([1.0, 3.0], requires_grad=True),  # averaged: 2
        loss_b=[torch.tensor(1.0), torch.tensor([2.0, 4.0])],  # 1 + 3
        grad_norm=torch.tensor(10.0),
    )
    loss, log_vars = model.parse_losses(losses)
    assert loss.item() == pytest.approx(6.0)
    assert loss.requires_grad
    assert list(log_vars) == ["loss", "acc", "loss_a", "loss_b", "grad_norm"]
    assert [v.item() for v in log_vars.values()] == pytest.approx([6.0, 0.5, 2.0, 4.0, 10.0])
    assert all(v.dim() == 0 and not v.requires_grad for v in log_vars.values())


def test_parse_losses_logs_the_total_under_loss_when_a_key_is_named_loss():
    model = TinyClassifier()
    _, log_vars = model.parse_losses(dict(loss=torch.tensor(1.0), loss_aux=torch.tensor(2.0)))
    assert list(log_vars) == ["loss", "loss_aux"]
    assert log_vars["loss"].item() == 3.0


def test_parse_losses_takes_an_empty_list_as_a_term_that_adds_nothing():
    model = TinyClassifier()
    total = torch.tensor(1.0, requires_grad=True)
    loss, log_vars = model.parse_losses(dict(loss=total, loss_x=[], acc=()))
    assert loss is total  # the empty terms add nothing
    assert list(log_vars) == ["loss", "loss_x", "acc"]
    assert [v.item() for v in log_vars.values()] == [1.0, 0.0, 0.0]
    assert all(v.dim() == 0 and not v.requires_grad for v in log_vars.values())
    with pytest.raises(ValueError, match=r"whose loss keys \['loss_x'\] hold empty lists"):
        model.parse_losses(dict(loss_x=[], acc=torch.tensor(1.0)))


def test_parse_losses_reads_nothing_back_from_the_device(counting_tensor):
    model = TinyClassifier()
    losses = dict(
        loss=counting_tensor(torch.tensor(1.0, requires_grad=True)),
        loss_list=[counting_tensor(torch.tensor([1.0, 2.0]))],
        acc=counting_tensor(torch.tensor(0.9)),
    )
    model.parse_losses(losses)
    assert counting_tensor.calls["detach"] >= 3  # the counter does see the calls
    assert not counting_tensor.syncing_calls & set(counting_tensor.calls)


@pytest.mark.parametrize(
    ("outputs", "expected"),
    [
        (lambda logits: logits.sum(), "returned Tensor, but it must return a dict of loss"),
        (lambda logits: [logits.sum()], "returned list, but it must return a dict of loss"),
        (lambda logits: dict(loss=logits.sum(), n=3), "key 'n' holds int"),
        (lambda logits: dict(loss=[logits.sum(), 1.0]), "key 'loss' holds list of Tensor, float;"),
        (
            lambda logits: dict(loss=logits.sum(), loss_x=[1, 2.0]),
            "'loss_x' holds list of float, int;",
        ),
    ],
)
def test_bad_loss_outputs_get_a_type_error_that_says_what_and_what_is_expected(
    outputs, expected, fake_optim_wrapper
):
    model = TinyClassifier(outputs=outputs)
    with pytest.raises(TypeError, match=expected) as info:
        model.train_step(batch(), fake_optim_wrapper(model))
    assert "TinyClassifier.forward(mode='loss')" in str(info.value)


def test_losses_without_a_loss_key_are_an_error_naming_the_keys(fake_optim_wrapper):
    model = TinyClassifier(outputs=lambda logits: dict(acc=logits.mean()))
    with pytest.raises(ValueError, match=r"keys \['acc'\], none of which contains 'loss'"):
        model.train_step(batch(), fake_optim_wrapper(model))


def test_list_batches_are_passed_positionally(fake_optim_wrapper):
    class PositionalModel(TinyClassifier):
        def forward(self, inputs, labels, mode="tensor"):
            return super().forward(inputs, labels, mode)

    model = PositionalModel()
    data = batch()
    log_vars = model.train_step((data["inputs"], data["data_samples"]), fake_optim_wrapper(model))
    assert "loss_cls" in log_vars
    assert len(model.val_step([data["inputs"], data["data_samples"]])) == 8


def test_a_preprocessor_returning_something_else_is_a_type_error():
    class BadPreprocessor(BaseDataPreprocessor):
        def forward(self, data, training=False):
            return data["inputs"]

    with pytest.raises(TypeError, match="must return a dict .* but returned Tensor"):
        TinyClassifier(data_preprocessor=BadPreprocessor()).val_step(batch())


def test_data_preprocessor_from_config_module_or_default():
    assert type(TinyClassifier().data_preprocessor) is BaseDataPreprocessor
    built = TinyClassifier(data_preprocessor=dict(type="ImgDataPreprocessor", mean=[1], std=[2]))
    assert isinstance(built.data_preprocessor, ImgDataPreprocessor)
    module = BaseDataPreprocessor(non_blocking=True)
    assert TinyClassifier(data_preprocessor=module).data_preprocessor is module
    with pytest.raises(TypeError, match="config dict .* or an nn.Module, but got str"):
        TinyClassifier(data_preprocessor="BaseDataPreprocessor")


def test_data_preprocessor_follows_the_model_device():
    model = TinyClassifier().to("meta")
    assert model.data_preprocessor.device == torch.device("meta")
    assert model.fc.weight.device == torch.device("meta")
    assert model.data_preprocessor(batch())["inputs"].device == torch.device("meta")
    assert "data_preprocessor._device_marker" not in model.state_dict()


def test_forward_must_be_implemented():
    class NoForward(BaseModel):
        pass

    with pytest.raises(TypeError, match="abstract"):
        NoForward()


def test_a_registered_mmengine_style_model_builds_and_trains(fake_optim_wrapper):
    @MODELS.register_module(force=True)
    class MMEngineToy(BaseModel):
        def __init__(self, width=4, data_preprocessor=None, init_cfg=None):
            super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
            self.backbone = nn.Sequential(nn.Linear(width, 8), nn.ReLU(), nn.Linear(8, 3))

        def forward(self, inputs, data_samples=None, mode="tensor"):
            feats = self.backbone(inputs)
            if mode == "loss":
                labels = torch.stack(data_samples)  # pseudo_collate: a list of labels
                return dict(loss=F.cross_entropy(feats, labels))
            if mode == "predict":
                return [dict(pred_score=s, gt_label=g) for s, g in zip(feats, data_samples)]
            return feats

    model = MODELS.build(
        dict(
            type="MMEngineToy",
            width=4,
            data_preprocessor=dict(type="BaseDataPreprocessor"),
            init_cfg=dict(type="Constant", layer="Linear", val=0.1, bias=0.0),
        )
    )
    model.init_weights()
    assert torch.all(model.backbone[0].weight == 0.1)
    data = dict(inputs=torch.randn(6, 4), data_samples=list(torch.randint(0, 3, (6,))))
    log_vars = model.train_step(data, fake_optim_wrapper(model))
    assert list(log_vars) == ["loss"]
    assert not torch.all(model.backbone[2].weight == 0.1)
    predictions = model.val_step(data)
    assert len(predictions) == 6 and predictions[0]["pred_score"].shape == (3,)


def test_hooks_on_the_model_and_its_preprocessor_still_run_in_every_step():
    from runnerx.optim import OptimWrapper

    model = TinyClassifier()
    optim_wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    calls = []
    model.register_forward_pre_hook(
        lambda module, args, kwargs: calls.append("pre"), with_kwargs=True
    )
    model.register_forward_hook(lambda module, args, output: calls.append("model"))
    model.data_preprocessor.register_forward_hook(lambda module, args, output: calls.append("data"))
    model.train_step(batch(), optim_wrapper)
    model.val_step(batch())
    assert calls == ["data", "pre", "model"] * 2

    global_calls = []
    handle = nn.modules.module.register_module_forward_hook(
        lambda module, args, output: global_calls.append(type(module).__name__)
    )
    try:
        TinyClassifier().train_step(batch(), optim_wrapper)
    finally:
        handle.remove()
    assert global_calls[0] == "BaseDataPreprocessor" and "TinyClassifier" in global_calls


def test_a_compiled_or_call_overriding_model_is_called_through_its_call():
    from runnerx.model.base_model.base_model import call_module

    model = TinyClassifier()
    assert call_module(model) == model.forward  # nothing else to do: forward directly
    compiled_calls = []
    model._compiled_call_impl = lambda *args, **kwargs: compiled_calls.append(kwargs["mode"])
    model.test_step(batch())
    assert compiled_calls == ["predict"]

    class OwnCall(TinyClassifier):
        def __call__(self, *args, **kwargs):
            compiled_calls.append("own call")
            return super().__call__(*args, **kwargs)

    OwnCall().test_step(batch())
    assert compiled_calls == ["predict", "own call"]
