"""MMEngine's FlexibleRunner configs: ``runner_type='FlexibleRunner'`` builds runnerx's Runner,
the strategy names (SingleDeviceStrategy, DDPStrategy, FSDPStrategy, ...) map their arguments
onto runnerx's strategies or fail naming the key, and with two real ranks (gloo, CPU) a
FlexibleRunner config trains to exactly the weights of its runnerx-native twin."""

import functools
import os
import warnings
from pathlib import Path

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import CPUOffload, ShardingStrategy
from torch.distributed.fsdp.wrap import (
    _recursive_wrap,
    size_based_auto_wrap_policy,
    transformer_auto_wrap_policy,
)

from runnerx import Config
from runnerx.model.examples import CharTransformerLM, DigitsConvNet
from runnerx.model.examples.char_transformer import TransformerBlock
from runnerx.parallel import model_state_dict, prepare_model, strategy_config
from runnerx.parallel.fsdp import fsdp_units
from runnerx.parallel.mmengine_fsdp import checkpointing_options, fsdp_options
from runnerx.parallel.wrap_policies import fsdp1_units
from runnerx.runner import Runner
from runnerx.runner.cli import build_runner
from runnerx.runner.mmengine_api import FlexibleRunner

ROOT = Path(__file__).parents[2]
WORLD_SIZE = 2
SIZE_POLICY = "torch.distributed.fsdp.wrap.size_based_auto_wrap_policy"
MMENGINE_NAMES = [
    "SingleDeviceStrategy",
    "DDPStrategy",
    "FSDPStrategy",
    "DeepSpeedStrategy",
    "ColossalAIStrategy",
]


def language_model():
    torch.manual_seed(0)
    return CharTransformerLM(vocab_size=32, block_size=8, n_layer=2, n_head=2, n_embd=16)


def is_one_of(module, class_names):
    """A check_fn with an argument of its own (bound from the config dict)."""
    return type(module).__name__ in class_names


# ----------------------------------------------------------------- names and mapping


@pytest.mark.parametrize("name", MMENGINE_NAMES)
def test_mmengine_strategy_names_are_known_strategies(name):
    assert strategy_config(dict(type=name)) == {"type": name}


def test_a_misspelt_strategy_name_gets_a_close_match():
    with pytest.raises(ValueError, match="did you mean 'FSDPStrategy'"):
        strategy_config(dict(type="FSDPStrategie"))


def test_single_device_strategy_turns_sync_batchnorm_back_into_batchnorm():
    from mmengine.model import revert_sync_batchnorm

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.SyncBatchNorm(4))
    weight = model[1].weight
    oracle = revert_sync_batchnorm(nn.Sequential(nn.Conv2d(1, 4, 3), nn.SyncBatchNorm(4)))
    oracle.load_state_dict(model.state_dict())
    prepared = prepare_model(model, strategy=dict(type="SingleDeviceStrategy"))
    assert prepared is model
    assert not isinstance(model[1], nn.SyncBatchNorm)
    assert model[1].weight is weight
    inputs = torch.randn(3, 1, 6, 6)
    assert torch.equal(prepared(inputs), oracle(inputs))
    assert torch.equal(model[1].running_mean, oracle[1].running_mean)


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({}, dict(sharding="zero3", state_dict_type="sharded")),  # MMEngine's defaults
        (
            dict(model_wrapper=dict(sharding_strategy="SHARD_GRAD_OP"), state_dict_cfg="full"),
            dict(sharding="zero2", state_dict_type="full"),
        ),
        (
            dict(model_wrapper=dict(sharding_strategy=ShardingStrategy.HYBRID_SHARD)),
            dict(sharding="hsdp", state_dict_type="sharded"),
        ),
        (
            dict(model_wrapper=dict(sharding_strategy="_HYBRID_SHARD_ZERO2")),
            dict(sharding="hsdp", reshard_after_forward=False, state_dict_type="sharded"),
        ),
        (
            dict(
                model_wrapper=dict(
                    mixed_precision=dict(param_dtype="bfloat16", reduce_dtype="float32"),
                    cpu_offload=CPUOffload(offload_params=True),
                    use_orig_params=True,
                    sync_module_states=True,
                ),
                state_dict_cfg=dict(state_dict_type="FULL_STATE_DICT"),
            ),
            dict(
                sharding="zero3",
                state_dict_type="full",
                mixed_precision=dict(
                    param_dtype=torch.bfloat16,
                    reduce_dtype=torch.float32,
                    cast_forward_inputs=True,
                ),
                cpu_offload=True,
            ),
        ),
        (
            dict(
                model_wrapper=dict(
                    auto_wrap_policy=dict(
                        type="torch.distributed.fsdp.wrap.transformer_auto_wrap_policy",
                        transformer_layer_cls={TransformerBlock},
                    ),
                    forward_prefetch=True,
                    backward_prefetch="BACKWARD_PRE",
                )
            ),
            dict(
                sharding="zero3",
                state_dict_type="sharded",
                wrap_modules=[TransformerBlock],
                prefetch=1,
            ),
        ),
        (
            dict(model_wrapper=dict(auto_wrap_policy=dict(type=SIZE_POLICY, min_num_params=1e7))),
            dict(sharding="zero3", state_dict_type="sharded"),  # nothing that big: the root only
        ),
    ],
)
def test_fsdp_strategy_arguments_become_runnerx_fsdp_options(arguments, expected):
    assert fsdp_options(language_model(), **arguments) == expected


POLICIES = {
    "size 50": functools.partial(size_based_auto_wrap_policy, min_num_params=50),
    "size 1000": functools.partial(size_based_auto_wrap_policy, min_num_params=1000),
    "size 3000": functools.partial(size_based_auto_wrap_policy, min_num_params=3000),
    "transformer": functools.partial(
        transformer_auto_wrap_policy, transformer_layer_cls={TransformerBlock}
    ),
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make_model", [language_model, lambda: DigitsConvNet(channels=(16, 32))])
def test_auto_wrap_policies_pick_the_modules_fsdp1_wraps(policy, make_model):
    model = make_model()
    wrapped = []

    def record(module, **_):
        wrapped.append(module)
        return module

    _recursive_wrap(  # FSDP1's own auto wrapping, recording instead of wrapping
        model, POLICIES[policy], record, set(), set(), only_wrap_children=True
    )
    assert [id(unit) for unit in fsdp1_units(model, POLICIES[policy])] == list(map(id, wrapped))


def test_a_size_policy_that_picks_all_modules_of_its_classes_becomes_wrap_modules():
    model = DigitsConvNet(channels=(16, 32))  # convolutions of 160 and 4,640, classifier 5,130
    wrapper = dict(auto_wrap_policy=dict(type=SIZE_POLICY, min_num_params=50))
    assert fsdp_options(model, wrapper)["wrap_modules"] == [nn.Conv2d, nn.Linear]


def test_a_policy_that_picks_part_of_a_class_is_refused_naming_the_module_left_out():
    model = DigitsConvNet(channels=(16, 32))
    wrapper = dict(auto_wrap_policy=dict(type=SIZE_POLICY, min_num_params=1000))
    with pytest.raises(ValueError, match="picks some Conv2d modules but not 'features.0'"):
        fsdp_options(model, wrapper)


def test_activation_checkpointing_check_fn_becomes_the_classes_it_picks():
    model = language_model()
    by_lambda = dict(check_fn=lambda module: isinstance(module, TransformerBlock))
    assert checkpointing_options(model, by_lambda) == {"modules": [TransformerBlock]}
    # a dict's own arguments go to the function (MMEngine binds the wrong ones)
    by_dict = dict(check_fn=dict(type=is_one_of, class_names=["LayerNorm"]))
    assert checkpointing_options(model, by_dict) == {"modules": [nn.LayerNorm]}


def test_fsdp_strategy_checkpoints_the_modules_check_fn_picks(current_log):
    model = language_model()
    strategy = dict(
        type="FSDPStrategy",
        activation_checkpointing=dict(
            check_fn=dict(type=is_one_of, class_names=["TransformerBlock"])
        ),
    )
    prepared = prepare_model(model, strategy=strategy)
    [message] = current_log
    assert message.startswith("strategy 'FSDPStrategy' is set but this is not a distributed run")
    assert [type(block).__name__ for block in prepared.blocks] == [
        "CheckpointedTransformerBlock"
    ] * 2


@pytest.mark.parametrize(
    ("strategy", "error", "message"),
    [
        (
            dict(type="FSDPStrategy", model_wrapper=dict(sharding_strategy="NO_SHARD")),
            ValueError,
            "sharding_strategy='NO_SHARD'.*use strategy=dict\\(type='DDPStrategy'\\)",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(sharding_stratgy="FULL_SHARD")),
            KeyError,
            "model_wrapper.sharding_stratgy is not a known key.*mean .*sharding_strategy",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(use_orig_params=False)),
            ValueError,
            "strategy.model_wrapper.use_orig_params=False",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(param_init_fn="my_init")),
            ValueError,
            "strategy.model_wrapper.param_init_fn.*load_from",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(process_group=dict(type="x"))),
            ValueError,
            "strategy.model_wrapper.process_group.*HYBRID_SHARD",
        ),
        (
            dict(
                type="FSDPStrategy",
                model_wrapper=dict(mixed_precision=dict(buffer_dtype="float16")),
            ),
            ValueError,
            "strategy.model_wrapper.mixed_precision.buffer_dtype",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(type="MyShardedWrapper")),
            ValueError,
            "strategy.model_wrapper.type='MyShardedWrapper'",
        ),
        (
            dict(type="FSDPStrategy", model_wrapper=dict(auto_wrap_policy="no_such_policy")),
            ValueError,
            "strategy.model_wrapper.auto_wrap_policy='no_such_policy' names no function",
        ),
        (
            dict(type="FSDPStrategy", state_dict_cfg="sharded"),
            ValueError,
            "strategy.state_dict_cfg='sharded' is not valid",
        ),
        (
            dict(type="FSDPStrategy", activation_checkpointing=dict(check_fn=len, x=1)),
            KeyError,
            "strategy.activation_checkpointing.x",
        ),
        (
            dict(type="DDPStrategy", work_dir="work_dirs/x"),
            ValueError,
            "strategy.work_dir.*set work_dir at the top level",
        ),
        (
            dict(type="DDPStrategy", model_wraper=dict()),
            KeyError,
            "strategy.model_wraper is not a known key.*did you mean .*model_wrapper",
        ),
        (
            dict(type="DDPStrategy", model_wrapper=dict(find_unused_params=True)),
            TypeError,
            "strategy.model_wrapper has 'find_unused_params'.*Did you mean 'find_unused_par",
        ),
        (
            dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=3)),
            ValueError,
            "runnerx does not run; ZeRO-2 and ZeRO-3 are FSDP2's",
        ),
        (
            dict(type="ColossalAIStrategy"),
            ValueError,
            "'ColossalAIStrategy'.*runnerx does not run.*FSDPStrategy",
        ),
    ],
)
def test_what_runnerx_cannot_honour_is_an_error_naming_the_key(strategy, error, message):
    with pytest.raises(error, match=message):
        prepare_model(language_model(), strategy=strategy)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (dict(skip_init_weights=True), "strategy.skip_init_weights"),
        (dict(model_wrapper=dict(backward_prefetch="BACKWARD_POST")), "BACKWARD_POST"),
        (dict(model_wrapper=dict(limit_all_gathers=False)), "limit_all_gathers=False"),
    ],
)
def test_options_without_effect_in_runnerx_warn(arguments, message):
    with pytest.warns(UserWarning, match=message):
        fsdp_options(language_model(), **arguments)


# ----------------------------------------------------------------- FlexibleRunner


def digits_cfg(work_dir, **changes):
    """The digits example for 4 iterations, no validation, checkpoints or test."""
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    cfg.train_cfg = dict(by_epoch=False, max_iters=4)
    cfg.train_dataloader.batch_size = 32
    cfg.param_scheduler = None
    cfg.default_hooks.checkpoint = None
    cfg.log_processor = dict(by_epoch=False)
    cfg.log_level = "WARNING"
    for key in ("val_dataloader", "val_cfg", "val_evaluator"):
        cfg[key] = None
    for key, value in changes.items():
        cfg[key] = value
    return cfg


def test_runner_type_flexible_runner_builds_runnerx_runner_with_its_arguments(tmp_path):
    cfg = digits_cfg(
        tmp_path,
        runner_type="FlexibleRunner",
        strategy=dict(type="SingleDeviceStrategy"),
        compile=dict(backend="eager", target="train_step"),
    )
    runner = build_runner(cfg)
    assert isinstance(runner, Runner)
    assert runner.launcher == "none"  # None: read from the environment, as MMEngine does
    assert runner.cfg.strategy == dict(type="SingleDeviceStrategy")
    assert runner.cfg.compile == dict(backend="eager", target="train_step")
    assert cfg.compile.target == "train_step"  # the user's config is left as it was
    assert runner.unwrapped_model._compiled_call_impl is not None
    runner.train()
    assert runner.iter == 4


def test_flexible_runner_arguments_win_over_the_config_and_default_work_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cfg = digits_cfg(tmp_path, strategy=dict(type="DDP"))
    runner = FlexibleRunner(
        model=cfg.model, strategy=dict(type="SingleDeviceStrategy"), compile=True, cfg=cfg
    )
    assert runner.work_dir == str(tmp_path / "work_dirs")  # FlexibleRunner's default
    assert runner.cfg.strategy == dict(type="SingleDeviceStrategy")
    assert runner.cfg.compile is True
    assert cfg.strategy == dict(type="DDP")


def test_flexible_runner_with_a_partial_policy_trains_without_writing_the_config(tmp_path):
    # MMEngine's FlexibleRunner example: an FSDP1 policy as a functools.partial, which a
    # config file cannot hold; the run trains and the log says why the config is not saved
    cfg = digits_cfg(tmp_path)
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=100)
    strategy = dict(type="FSDPStrategy", model_wrapper=dict(auto_wrap_policy=policy))
    args = {key: cfg[key] for key in ("train_dataloader", "train_cfg", "optim_wrapper")}
    runner = FlexibleRunner(
        model=cfg.model, work_dir=str(tmp_path), strategy=strategy, log_level="INFO", **args
    )
    runner.train()
    assert runner.iter == 4 and runner.cfg_text is None
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "strategy 'FSDPStrategy' is set but this is not a distributed run" in log
    assert "The config is not logged or saved as a file" in log and "functools.partial" in log
    assert not list(tmp_path.glob("*.py"))


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        (dict(strategy=object()), TypeError, "runnerx does not take strategy objects"),
        (dict(compile=dict(target="val_step")), ValueError, "compile.target='val_step' is not"),
    ],
)
def test_flexible_runner_refuses_what_it_cannot_run(tmp_path, changes, error, message):
    cfg = digits_cfg(tmp_path, runner_type="FlexibleRunner")
    with pytest.raises(error, match=message):
        FlexibleRunner(model=cfg.model, work_dir=str(tmp_path), cfg=cfg, **changes)


# ----------------------------------------------------------------- two ranks

TWINS = {
    # name: (FlexibleRunner's strategy, runnerx's own strategy)
    "ddp": (dict(type="DDPStrategy"), "ddp"),
    "ddp_options": (
        dict(type="DDPStrategy", model_wrapper=dict(find_unused_parameters=True)),
        # a model_wrapper of one's own leaves broadcast_buffers at torch's default
        dict(type="DDP", find_unused_parameters=True, broadcast_buffers=True),
    ),
    "fsdp": (dict(type="FSDPStrategy", state_dict_cfg="full"), "fsdp"),
    "zero2_blocks": (
        dict(
            type="FSDPStrategy",
            model_wrapper=dict(
                sharding_strategy="SHARD_GRAD_OP",
                auto_wrap_policy=dict(type=SIZE_POLICY, min_num_params=50),
            ),
        ),
        dict(type="FSDP", sharding="zero2", wrap_modules=["Conv2d", "Linear"]),
    ),
}


def train_rank(cfg):
    runner = build_runner(cfg)
    model = runner.model
    # full state dicts are gathered on rank 0 under FSDP (copies), are the weights otherwise
    initial = {key: value.clone() for key, value in model_state_dict(model).items()}
    runner.train()
    outcome = dict(
        wrapper=type(model).__name__,
        parameter=type(next(model.parameters())).__name__,
        units=len(fsdp_units(model)),
        ddp_options=[
            getattr(model, name, None)
            for name in ("find_unused_parameters", "broadcast_buffers", "forward_sync_buffers")
        ],
        initial=initial,
        state=model_state_dict(model),
    )
    del runner, model
    return outcome


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE)
    warnings.simplefilter("ignore")
    outcome = {}
    for name, (flexible, native) in TWINS.items():
        work_dir = Path(out_dir) / name
        outcome[name] = train_rank(
            digits_cfg(
                work_dir / "flexible",
                launcher="pytorch",
                runner_type="FlexibleRunner",
                strategy=flexible,
            )
        )
        outcome[f"{name}_native"] = train_rank(
            digits_cfg(work_dir / "native", launcher="pytorch", strategy=native)
        )
    # MMEngine's Runner way to FSDP: model_wrapper_cfg with FSDP1's options
    wrapper_cfg = dict(
        type="MMFullyShardedDataParallel",
        sharding_strategy="SHARD_GRAD_OP",
        auto_wrap_policy=dict(type=SIZE_POLICY, min_num_params=50),
    )
    outcome["model_wrapper_cfg"] = train_rank(
        digits_cfg(Path(out_dir) / "wrapper_cfg", launcher="pytorch", model_wrapper_cfg=wrapper_cfg)
    )
    return outcome


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("flexible"), WORLD_SIZE, timeout=180)


@pytest.mark.parametrize(
    ("name", "wrapper", "parameter", "units"),
    [
        ("ddp", "DistributedDataParallelModel", "Parameter", 0),
        ("ddp_options", "DistributedDataParallelModel", "Parameter", 0),
        ("fsdp", "FullyShardedModel", "DTensor", 1),  # the root only
        ("zero2_blocks", "FullyShardedModel", "DTensor", 4),  # 2 convolutions, classifier, root
    ],
)
def test_flexible_runner_strategies_wrap_and_train_as_their_runnerx_twins(
    ranks, name, wrapper, parameter, units
):
    flexible, native = ranks[0][name], ranks[0][f"{name}_native"]
    for outcome in (flexible, native):
        assert (outcome["wrapper"], outcome["parameter"], outcome["units"]) == (
            wrapper,
            parameter,
            units,
        )
    assert flexible["ddp_options"] == native["ddp_options"]
    assert flexible["state"].keys() == native["state"].keys()
    for key, value in native["state"].items():
        assert torch.equal(flexible["state"][key], value), key
    # the weights were trained: the comparison is not of two untouched models
    assert not torch.equal(
        flexible["state"]["classifier.weight"], flexible["initial"]["classifier.weight"]
    )


def test_mmengine_fsdp_model_wrapper_cfg_shards_and_trains_as_runnerxs_fsdp(ranks):
    mmengine_way, native = ranks[0]["model_wrapper_cfg"], ranks[0]["zero2_blocks_native"]
    assert (mmengine_way["wrapper"], mmengine_way["units"]) == ("FullyShardedModel", 4)
    for key, value in native["state"].items():
        assert torch.equal(mmengine_way["state"][key], value), key


def test_ddp_strategy_model_wrapper_options_reach_ddp(ranks):
    default, options = ranks[0]["ddp"]["ddp_options"], ranks[0]["ddp_options"]["ddp_options"]
    assert (default[0], options[0]) == (False, True)  # find_unused_parameters
    assert default[1:] != options[1:]  # broadcast_buffers: False by default, torch's with options


def test_ddp_strategy_in_one_process_warns_with_its_own_name(current_log):
    prepared = prepare_model(language_model(), strategy=dict(type="DDPStrategy"))
    [message] = current_log
    assert message.startswith("strategy 'DDPStrategy' is set but this is not a distributed run")
    assert type(prepared).__name__ == "CharTransformerLM"


def test_mmengine_fsdp_model_wrapper_cfg_errors_name_its_own_key():
    from runnerx.registry import MODEL_WRAPPERS

    build = MODEL_WRAPPERS.get("MMFullyShardedDataParallel")
    with pytest.raises(ValueError, match=r"model_wrapper_cfg\.use_orig_params=False"):
        build(language_model(), use_orig_params=False)
