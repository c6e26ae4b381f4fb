"""prepare_model in one process: activation checkpointing, compile (with EMA), sync-BN,
speed switches, strategies that need no process group, and the errors of bad configs."""

import copy
import warnings

import pytest
import torch
from torch import nn
from torch._dynamo.testing import CompileCounter

from runnerx.logging import MessageHub
from runnerx.model import BaseModel, ExponentialMovingAverage
from runnerx.model.examples import CharTransformerLM, TransformerBlock
from runnerx.optim import OptimWrapper
from runnerx.parallel import (
    FullyShardedModel,
    apply_activation_checkpointing,
    convert_sync_batchnorm,
    prepare_model,
    prepare_model_from_cfg,
    unwrap,
)
from runnerx.parallel.steps import report_parameters_without_gradient

VOCAB, LENGTH = 32, 8


def make_lm():
    torch.manual_seed(0)
    return CharTransformerLM(vocab_size=VOCAB, block_size=LENGTH, n_layer=2, n_head=2, n_embd=16)


def lm_batch(seed=1):
    tokens = torch.randint(0, VOCAB, (4, LENGTH + 1), generator=torch.Generator().manual_seed(seed))
    return dict(inputs=tokens[:, :-1], data_samples=tokens[:, 1:])


class ConvBN(BaseModel):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 2), nn.BatchNorm1d(2))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return self.head(self.bn(self.conv(inputs)))


def gradients(model, batch):
    model.zero_grad()
    model(**batch, mode="loss")["loss"].backward()
    return {name: param.grad.clone() for name, param in model.named_parameters()}


# ----------------------------------------------------------------- activation checkpointing


def test_activation_checkpointing_recomputes_blocks_and_gives_the_same_gradients():
    plain, checkpointed = make_lm(), make_lm()
    prepare_model(checkpointed, activation_checkpointing=dict(modules=["TransformerBlock"]))
    calls = []
    for block in checkpointed.blocks:
        block.ln_1.register_forward_pre_hook(lambda *args: calls.append(1))
    expected = gradients(plain, lm_batch())
    actual = gradients(checkpointed, lm_batch())
    assert len(calls) == 2 * len(checkpointed.blocks)  # forward, then again in backward
    assert actual.keys() == expected.keys()
    for name, grad in expected.items():
        torch.testing.assert_close(actual[name], grad, rtol=0, atol=1e-6)


def test_mmengine_activation_checkpointing_list_of_paths_checkpoints_only_those():
    # MMEngine's save_gpu_memory.md: activation_checkpointing=['resnet.layer1', ...]
    plain, checkpointed = make_lm(), make_lm()
    prepare_model(checkpointed, activation_checkpointing=["blocks.1"])
    assert [type(block).__name__ for block in checkpointed.blocks] == [
        "TransformerBlock",
        "CheckpointedTransformerBlock",
    ]
    expected, actual = gradients(plain, lm_batch()), gradients(checkpointed, lm_batch())
    for name, grad in expected.items():
        torch.testing.assert_close(actual[name], grad, rtol=0, atol=1e-6)
    with pytest.raises(AttributeError, match=r"activation_checkpointing\[1\].*'blocks.7'"):
        prepare_model(make_lm(), activation_checkpointing=["blocks.0", "blocks.7"])


def test_checkpointed_blocks_keep_their_type_names_and_copies():
    model = make_lm()
    keys = list(model.state_dict())
    (first, *_) = apply_activation_checkpointing(model, dict(modules="TransformerBlock"))
    assert isinstance(first, TransformerBlock)
    assert type(first).__name__ == "CheckpointedTransformerBlock"
    assert list(model.state_dict()) == keys
    clone = copy.deepcopy(model)
    with torch.no_grad():
        for param in clone.parameters():
            param.zero_()
    assert not torch.equal(clone(lm_batch()["inputs"]), model(lm_batch()["inputs"]))


@pytest.mark.parametrize(
    ("cfg", "error", "message"),
    [
        (dict(), KeyError, "needs modules"),
        (dict(modules=["TransformerBlok"]), ValueError, "did you mean 'TransformerBlock'"),
        (dict(module=["TransformerBlock"]), KeyError, "activation_checkpointing.module is not"),
    ],
)
def test_activation_checkpointing_config_errors_name_the_key(cfg, error, message):
    with pytest.raises(error, match=message):
        prepare_model(make_lm(), activation_checkpointing=cfg)


# ----------------------------------------------------------------- compile


def train_steps(model, optim_wrapper, steps=3):
    for seed in range(steps):
        model.train_step(lm_batch(seed), optim_wrapper)


def test_compile_keeps_parameters_train_step_and_ema_working():
    MessageHub.get_instance("compile-test")
    model = make_lm()
    params = list(model.parameters())
    counter = CompileCounter()
    prepared = prepare_model(model, compile=dict(backend=counter))
    assert prepared is model and list(prepared.parameters()) == params
    ema = ExponentialMovingAverage(unwrap(prepared), momentum=0.5)
    start = copy.deepcopy(ema.module.state_dict())
    optim_wrapper = OptimWrapper(torch.optim.SGD(prepared.parameters(), lr=0.5))
    for seed in range(3):
        prepared.train_step(lm_batch(seed), optim_wrapper)
        ema.update_parameters(unwrap(prepared))
    assert counter.frame_count >= 1  # the forward passes ran compiled
    # the average moved, and sits between the start and the trained weights
    averaged = ema.module.state_dict()["ln_f.weight"]
    assert not torch.equal(averaged, start["ln_f.weight"])
    assert not torch.equal(averaged, model.state_dict()["ln_f.weight"])
    # the averaged copy runs its own weights, not the compiled model's
    reference = make_lm()
    reference.load_state_dict(ema.module.state_dict())
    inputs = lm_batch()["inputs"]
    with torch.no_grad():
        torch.testing.assert_close(ema.module(inputs), reference(inputs))


def test_compile_per_block_compiles_each_block_in_place():
    model = make_lm()
    counter = CompileCounter()
    # MMEngine's target is accepted: the forward pass is what gets compiled either way
    prepare_model(
        model, compile=dict(backend=counter, modules=["TransformerBlock"], target="forward")
    )
    with torch.no_grad():
        model(lm_batch()["inputs"])
    assert counter.frame_count >= 1
    assert all(block._compiled_call_impl is not None for block in model.blocks)
    assert model._compiled_call_impl is None


@pytest.mark.parametrize(
    ("cfg", "error", "message"),
    [
        (dict(mode="max_autotune"), ValueError, "did you mean 'max-autotune'"),
        (dict(backnd="eager"), KeyError, "compile.backnd is not a known key.*'backend'"),
        (
            dict(backend="inductr"),
            ValueError,
            "compile.backend='inductr' is not valid; expected one of .*'eager'.*"
            "did you mean 'inductor'",
        ),
        ("yes", TypeError, "compile must be True or a dict"),
        (dict(target="val_step"), ValueError, "compile.target='val_step' is not valid"),
    ],
)
def test_compile_config_errors_name_the_key(cfg, error, message):
    with pytest.raises(error, match=message):
        prepare_model(make_lm(), compile=cfg)


# ----------------------------------------------------------------- sync-BN, speed switches


def test_sync_bn_conversion_replaces_every_batchnorm():
    model = convert_sync_batchnorm(ConvBN(), "torch")
    norms = [module for module in model.modules() if "BatchNorm" in type(module).__name__]
    assert len(norms) == 2 and all(isinstance(m, nn.SyncBatchNorm) for m in norms)
    with pytest.raises(ValueError, match="sync_bn='mmcv'"):
        convert_sync_batchnorm(ConvBN(), "mmcv")


def test_sync_bn_is_left_out_of_single_process_runs():
    model = prepare_model(ConvBN(), strategy=dict(sync_bn=True))
    assert isinstance(model.bn, nn.BatchNorm2d) and not isinstance(model.bn, nn.SyncBatchNorm)
    with pytest.raises(ValueError, match="sync_bn='mmcv'.*expected one of True, 'torch'"):
        prepare_model(ConvBN(), sync_bn="mmcv")


def test_a_models_own_sync_bn_runs_as_batchnorm_in_a_single_process():
    model = convert_sync_batchnorm(ConvBN(), "torch")  # a model written with SyncBatchNorm
    weight = model.bn.weight
    model = prepare_model(model)
    assert not any(isinstance(module, nn.SyncBatchNorm) for module in model.modules())
    assert model.bn.weight is weight  # the same parameters
    model(torch.randn(2, 3, 6, 6)).sum().backward()  # trains in this process
    assert model.bn.weight.grad is not None


def test_matmul_precision_and_channels_last_from_env_cfg():
    before = torch.get_float32_matmul_precision()
    model = ConvBN()
    model.data_preprocessor.channels_last = False
    try:
        prepare_model(model, env_cfg=dict(matmul_precision="high", channels_last=True))
        assert torch.get_float32_matmul_precision() == "high"
    finally:
        torch.set_float32_matmul_precision(before)
    assert model.conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert model.data_preprocessor.channels_last is True


def test_channels_last_on_a_model_without_4d_weights_warns_that_it_changes_nothing(current_log):
    prepare_model(ConvBN(), env_cfg=dict(channels_last=True))  # conv weights: no warning
    assert current_log == []
    prepare_model(make_lm(), env_cfg=dict(channels_last=True))
    [message] = current_log
    assert message.startswith("env_cfg.channels_last=True has no effect on this model")
    assert "CharTransformerLM" in message and "no 4-D weights" in message
    with pytest.raises(ValueError, match="env_cfg.matmul_precision='hi'"):
        prepare_model(ConvBN(), env_cfg=dict(matmul_precision="hi"))


# ----------------------------------------------------------------- strategies


def test_one_process_runs_the_model_unwrapped():
    model = make_lm()
    assert prepare_model(model) is model
    assert prepare_model(model, model_wrapper_cfg=dict(type="MMDistributedDataParallel")) is model


@pytest.mark.parametrize("strategy", ["ddp", "FSDP", "dp"])
def test_parallel_strategies_in_one_cpu_process_log_a_warning_and_run_the_model(
    strategy, current_log
):
    if strategy == "dp" and torch.cuda.device_count() > 1:
        pytest.skip("with several GPUs strategy='dp' wraps the model")
    model = make_lm()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # in the run's log, not a Python warning
        assert prepare_model(model, strategy=strategy) is model
    [message] = current_log
    assert "not a distributed run" in message or "at least two GPUs" in message


def test_strategy_config_errors():
    with pytest.raises(ValueError, match="'fdsp' is not known.*did you mean 'fsdp'"):
        prepare_model(make_lm(), strategy="fdsp")
    with pytest.raises(ValueError, match="both strategy and model_wrapper_cfg"):
        prepare_model(make_lm(), strategy="ddp", model_wrapper_cfg=dict())
    with pytest.raises(TypeError, match="strategy has 'shardng'.*Did you mean 'sharding'"):
        prepare_model(make_lm(), strategy=dict(type="FSDP", shardng="zero2"))


@pytest.mark.parametrize(
    "options, error, start",
    [
        (dict(sharding="zero4"), ValueError, "strategy.sharding='zero4' is not valid; expected"),
        (dict(wrap_modules=["Nope"]), ValueError, "strategy.wrap_modules=['Nope'] matches no"),
        (dict(state_dict_type="ful"), ValueError, "strategy.state_dict_type='ful' is not valid"),
        (dict(mixed_precision="bf16"), ValueError, "strategy.mixed_precision.param_dtype='bf16'"),
        (dict(prefetch=1), ValueError, "strategy.prefetch needs strategy.wrap_modules"),
        (dict(shard_size=2), ValueError, "strategy.shard_size is for sharding='hsdp'"),
    ],
)
def test_fsdp_values_are_checked_in_one_process_too(options, error, start):
    with pytest.raises(error) as caught:
        prepare_model(make_lm(), strategy=dict(type="FSDP", **options))
    assert str(caught.value).startswith(start), str(caught.value)


def test_fsdp_refuses_an_unknown_sharding_with_a_close_match():
    with pytest.raises(ValueError, match="strategy.sharding='zero-3'.*did you mean 'zero3'"):
        FullyShardedModel(make_lm(), sharding="zero-3")


def test_prepare_model_from_cfg_reads_the_config_keys():
    model = make_lm()
    cfg = dict(compile=None, activation_checkpointing=dict(modules=["TransformerBlock"]))
    assert prepare_model_from_cfg(model, cfg) is model
    assert type(model.blocks[0]).__name__ == "CheckpointedTransformerBlock"


def test_unwrap_finds_the_model_inside_wrappers():
    model = make_lm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapped = nn.DataParallel(torch.compile(model, backend="eager"))
    assert unwrap(wrapped) is model


def test_detect_anomalous_params_names_parameters_without_gradient():
    model = ConvBN()
    model.unused = nn.Linear(2, 2)
    loss = model(torch.randn(2, 3, 6, 6)).sum()
    assert report_parameters_without_gradient(loss, model) == ["unused.weight", "unused.bias"]


def test_a_model_wrapper_cfg_that_is_not_a_dict_names_the_key():
    from runnerx.parallel.strategies import build_model_wrapper

    with pytest.raises(TypeError, match="model_wrapper_cfg must be a dict"):
        build_model_wrapper(make_lm(), "MMSeparateDistributedDataParallel")
