"""MMEngine's strategy objects (``runnerx._strategy``) for scripts that drive the loop
themselves: one process against mmengine-lite's own strategy, checkpoints that round-trip, the
errors; and two real ranks (gloo, CPU) running MMEngine's llama2 fine-tuning recipe on a tiny
transformer under FSDPStrategy, and DDPStrategy against a plain DDP loop."""

import os
import warnings
from functools import partial
from pathlib import Path

import pytest
import torch
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy

from runnerx import Config
from runnerx._strategy import (
    ColossalAIStrategy,
    DDPStrategy,
    DeepSpeedStrategy,
    FSDPStrategy,
    SingleDeviceStrategy,
)
from runnerx.checkpoint import load_checkpoint
from runnerx.model.examples import CharTransformerLM
from runnerx.model.examples.char_transformer import TransformerBlock
from runnerx.optim import OptimWrapper
from runnerx.parallel import model_state_dict, optimizer_state_dict, prepare_model
from runnerx.parallel.fsdp import fsdp_units
from runnerx.runner.mmengine_api import FlexibleRunner
from tests.parallel.ranks_common import (
    STEPS,
    WORLD_SIZE,
    assert_same_tensors,
    batches,
    make_model,
    rank_share,
    train,
)

ROOT = Path(__file__).parents[2]
QUIET = dict(log_kwargs=dict(log_level="WARNING"))
ADAMW = dict(optimizer=dict(type="AdamW", lr=1e-2))
STEP_LR = [dict(type="StepLR", step_size=1, gamma=0.5)]
SGD = dict(optimizer=dict(type="SGD", lr=0.5, momentum=0.9))
POLICY = partial(transformer_auto_wrap_policy, transformer_layer_cls={TransformerBlock})


def unseeded_model():
    """The test model, its weights drawn from whatever seed the strategy set."""
    return CharTransformerLM(vocab_size=32, block_size=8, n_layer=2, n_head=2, n_embd=16)


def fine_tune(model, optim_wrapper, schedulers, data, epochs):
    """MMEngine's llama2 loop: ``update_params`` per batch, the schedulers per epoch; returns
    each epoch's mean loss and the lr it ran with."""
    history = []
    for _ in range(epochs):
        losses = []
        for batch in data:
            loss = model(batch["inputs"], batch["data_samples"], mode="loss")["loss"]
            optim_wrapper.update_params(loss)
            losses.append(loss.item())
        history.append((sum(losses) / len(losses), optim_wrapper.get_lr()["lr"][0]))
        for scheduler in schedulers:
            scheduler.step()
    return history


# ----------------------------------------------------------------- one process


def test_single_device_strategy_trains_as_mmengines_does(tmp_path):
    from mmengine._strategy import SingleDeviceStrategy as MMEngineStrategy

    arguments = dict(env_kwargs=dict(randomness=dict(seed=42)))
    optim = dict(ADAMW, accumulative_counts=2)
    dispatch = dict(max_iters=2 * STEPS, max_epochs=2)
    outcome = {}
    for name, kind in (("runnerx", SingleDeviceStrategy), ("mmengine", MMEngineStrategy)):
        strategy = kind(work_dir=str(tmp_path / name), **arguments)
        model = unseeded_model()  # drawn after the strategy seeded the process
        initial = {key: value.clone() for key, value in model.state_dict().items()}
        prepared = strategy.prepare(
            model, optim_wrapper=dict(optim), param_scheduler=STEP_LR, dispatch_kwargs=dispatch
        )
        history = fine_tune(*prepared, batches(), epochs=2)
        outcome[name] = (type(prepared), initial, history, model.state_dict(), strategy.seed)
    ours, theirs = outcome["runnerx"], outcome["mmengine"]
    assert ours[0] is theirs[0] is list
    assert_same_tensors(ours[1], theirs[1], atol=0)  # the same seed gave the same weights
    assert [lr for _, lr in ours[2]] == [lr for _, lr in theirs[2]] == [1e-2, 5e-3]
    assert ours[2][1][0] < ours[2][0][0]  # the loss went down
    assert_same_tensors(ours[3], theirs[3], atol=1e-6)
    assert ours[4] == theirs[4] == 42


@pytest.mark.parametrize(
    ("components", "returned"),
    [
        (dict(), ["CharTransformerLM"]),
        (dict(optim_wrapper=SGD), ["CharTransformerLM", "OptimWrapper"]),
        (dict(optim_wrapper=SGD, param_scheduler=STEP_LR), ["CharTransformerLM", "OptimWrapper"]),
    ],
)
def test_prepare_returns_what_it_built_as_mmengine_does(tmp_path, components, returned):
    strategy = SingleDeviceStrategy(work_dir=str(tmp_path), **QUIET)
    prepared = strategy.prepare(make_model(), **components, dispatch_kwargs=dict(max_epochs=2))
    if len(returned) == 1:
        assert prepared is strategy.model and strategy.prepare(make_model()) is prepared
        return
    assert prepared[:2] == [strategy.model, strategy.optim_wrapper]
    assert [type(part).__name__ for part in prepared[:2]] == returned
    if "param_scheduler" in components:
        assert prepared[2] is strategy.param_schedulers
        assert [type(s).__name__ for s in prepared[2]] == ["StepLR"]
    assert strategy.prepare(make_model()) == prepared  # prepared once: the same parts again


def test_the_strategy_sets_up_the_process_and_logs_to_its_run_folder(tmp_path):
    strategy = SingleDeviceStrategy(
        work_dir=str(tmp_path), env_kwargs=dict(randomness=dict(seed=5), launcher="none")
    )
    assert (strategy.rank, strategy.world_size, strategy.distributed, strategy.seed) == (
        0,
        1,
        False,
        5,
    )
    assert strategy.log_dir == str(tmp_path / strategy.timestamp)
    strategy.logger.info("fine-tuning starts")
    log = Path(strategy.log_dir, f"{strategy.timestamp}.log").read_text()
    assert "fine-tuning starts" in log


def test_checkpoints_load_and_resume_to_the_same_training(tmp_path):
    def prepared(seed, folder):
        strategy = SingleDeviceStrategy(
            work_dir=str(tmp_path / folder), env_kwargs=dict(randomness=dict(seed=seed)), **QUIET
        )
        parts = strategy.prepare(
            unseeded_model(),
            optim_wrapper=SGD,
            param_scheduler=STEP_LR,
            dispatch_kwargs=dict(max_epochs=3),
        )
        return strategy, parts

    strategy, (model, optim_wrapper, schedulers) = prepared(42, "first")
    fine_tune(model, optim_wrapper, schedulers, batches(), epochs=1)
    path = str(tmp_path / "epoch_1.pth")
    strategy.save_checkpoint(path, extra_ckpt=dict(meta=dict(epoch=1)))
    saved = load_checkpoint(path)
    assert sorted(saved) == ["meta", "optimizer", "param_schedulers", "state_dict"]
    assert (saved["meta"]["seed"], saved["meta"]["epoch"]) == (42, 1)
    unseeded_model().load_state_dict(saved["state_dict"], strict=True)

    loader, (fresh, *_) = prepared(7, "load")
    rest = loader.load_checkpoint(path)
    assert "state_dict" not in rest and rest["meta"]["epoch"] == 1
    assert_same_tensors(fresh.state_dict(), model.state_dict(), atol=0)

    resumer, (resumed, resumed_optim, resumed_schedulers) = prepared(7, "resume")
    resumer.resume(path)
    assert resumer.seed == 42  # the checkpoint's seed, as in MMEngine
    assert resumed_schedulers[0].state_dict() == schedulers[0].state_dict()
    assert_same_tensors(
        resumed_optim.state_dict()["state"][0], optim_wrapper.state_dict()["state"][0], atol=0
    )
    # both carry on from the same point to the same weights
    fine_tune(model, optim_wrapper, schedulers, batches(), epochs=1)
    fine_tune(resumed, resumed_optim, resumed_schedulers, batches(), epochs=1)
    assert_same_tensors(resumed.state_dict(), model.state_dict(), atol=0)
    assert resumed_optim.get_lr() == optim_wrapper.get_lr() != {"lr": [SGD["optimizer"]["lr"]]}


def test_auto_scale_lr_scales_by_the_real_batch_size(tmp_path):
    strategy = SingleDeviceStrategy(
        work_dir=str(tmp_path), auto_scale_lr=dict(enable=True, base_batch_size=16), **QUIET
    )
    _, optim_wrapper = strategy.prepare(
        make_model(), optim_wrapper=SGD, dispatch_kwargs=dict(train_micro_batch_size_per_gpu=4)
    )
    assert optim_wrapper.get_lr()["lr"] == [0.5 * 4 / 16]


def test_fsdp_strategy_in_one_process_warns_in_its_log_and_saves_a_file(tmp_path):
    strategy = FSDPStrategy(
        work_dir=str(tmp_path), model_wrapper=dict(auto_wrap_policy=POLICY), **QUIET
    )
    model, _ = strategy.prepare(make_model(), optim_wrapper=SGD)
    log = Path(strategy.log_dir, f"{strategy.timestamp}.log").read_text()
    assert "strategy 'FSDPStrategy' is set but this is not a distributed run" in log
    assert type(model) is CharTransformerLM
    strategy.save_checkpoint(str(tmp_path / "last.pth"))  # 'local', but nothing is sharded
    assert (tmp_path / "last.pth").is_file()


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (
            lambda d: SingleDeviceStrategy(work_dir=d, env_kwargs=dict(randomnes=dict(seed=1))),
            KeyError,
            "env_kwargs.randomnes is not a known key.*did you mean 'randomness'",
        ),
        (
            lambda d: SingleDeviceStrategy(work_dir=d, env_kwargs=dict(randomness=dict(sed=1))),
            KeyError,
            "env_kwargs.randomness.sed is not a known key",
        ),
        (
            lambda d: SingleDeviceStrategy(work_dir=d, env_kwargs=dict(launcher="torchrun")),
            ValueError,
            "env_kwargs.launcher='torchrun' is not valid",
        ),
        (
            lambda d: SingleDeviceStrategy(work_dir=d, log_kwargs=dict(file_mode="w")),
            KeyError,
            "log_kwargs.file_mode is not a known key",
        ),
        (
            lambda d: SingleDeviceStrategy(work_dir=d).prepare(
                make_model(), param_scheduler=STEP_LR
            ),
            ValueError,
            "param_scheduler=...\\) needs optim_wrapper",
        ),
        (
            lambda d: SingleDeviceStrategy(work_dir=d).prepare(
                make_model(), optim_wrapper=dict(SGD, accumulative_counts=2)
            ),
            ValueError,
            "accumulative_counts=2 needs.*dispatch_kwargs=dict\\(max_iters",
        ),
        (
            lambda d: SingleDeviceStrategy(
                work_dir=d, auto_scale_lr=dict(enable=True, base_batch_size=16)
            ).prepare(make_model(), optim_wrapper=SGD),
            KeyError,
            "train_micro_batch_size_per_gpu",
        ),
        (
            lambda d: FSDPStrategy(work_dir=d, state_dict_cfg="sharded").prepare(make_model()),
            ValueError,
            "strategy.state_dict_cfg='sharded' is not valid",
        ),
        (
            lambda d: DDPStrategy(work_dir=d, model_wrapper=dict(find_unused_params=True)).prepare(
                make_model()
            ),
            TypeError,
            "strategy.model_wrapper has 'find_unused_params'",
        ),
        (lambda d: SingleDeviceStrategy(work_dir=d).model, AttributeError, "set by prepare"),
        (lambda d: DeepSpeedStrategy(), ValueError, "runnerx does not run; ZeRO-2 and ZeRO-3"),
        (lambda d: ColossalAIStrategy(), ValueError, "'ColossalAIStrategy'.*does not run"),
    ],
)
def test_what_runnerx_cannot_honour_is_an_error_naming_the_argument(
    tmp_path, build, error, message
):
    with pytest.raises(error, match=message):
        build(str(tmp_path))


def test_flexible_runner_takes_a_strategy_object(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    strategy = FSDPStrategy(
        work_dir=str(tmp_path / "strategy"),
        model_wrapper=dict(auto_wrap_policy=POLICY),
        state_dict_cfg="full",
        env_kwargs=dict(randomness=dict(seed=3)),
        **QUIET,
    )
    runner = FlexibleRunner(
        model=cfg.model,
        work_dir=str(tmp_path),
        strategy=strategy,
        train_dataloader=dict(cfg.train_dataloader, batch_size=32),
        train_cfg=dict(by_epoch=False, max_iters=2),
        optim_wrapper=cfg.optim_wrapper,
        default_hooks=dict(checkpoint=None),
        log_level="WARNING",
    )
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    assert "strategy 'FSDPStrategy' is set but this is not a distributed run" in log
    assert runner.cfg.strategy == strategy.wrapper_cfg()
    assert runner.cfg.strategy.type == "FSDPStrategy" and runner.seed == 3
    runner.train()
    assert runner.iter == 2


# ----------------------------------------------------------------- two ranks


def fsdp(work_dir, state_dict_cfg, seed=42):
    return FSDPStrategy(
        model_wrapper=dict(auto_wrap_policy=POLICY),
        state_dict_cfg=state_dict_cfg,
        work_dir=str(work_dir),
        env_kwargs=dict(randomness=dict(seed=seed)),
        **QUIET,
    )


def fine_tune_full(out, data, outcome):
    """The llama2 recipe with ``state_dict_cfg='full'``: train, save, load, resume."""
    strategy = fsdp(out / "full", "full")
    outcome["process"] = (strategy.launcher, strategy.distributed, strategy.world_size)
    model, optim_wrapper, schedulers = strategy.prepare(
        make_model(),
        optim_wrapper=ADAMW,
        param_scheduler=STEP_LR,
        dispatch_kwargs=dict(max_iters=2 * STEPS, max_epochs=2),
    )
    outcome["wrapped"] = (
        type(model).__name__,
        len(fsdp_units(model)),
        type(next(model.parameters())).__name__,
    )
    outcome["history"] = fine_tune(model, optim_wrapper, schedulers, data, epochs=2)
    outcome["path"] = str(out / "full" / "epoch_2.pth")
    strategy.save_checkpoint(outcome["path"])
    outcome["trained"] = strategy.model_state_dict()
    outcome["saved"] = (strategy.seed, optim_wrapper.get_lr(), schedulers[0].last_step)

    other = fsdp(out / "other", "full", seed=7)
    twin, twin_optim, twin_schedulers = other.prepare(
        make_model(),
        optim_wrapper=ADAMW,
        param_scheduler=STEP_LR,
        dispatch_kwargs=dict(max_epochs=2),
    )
    other.load_checkpoint(outcome["path"])
    outcome["loaded"] = model_state_dict(twin)
    other.resume(outcome["path"])
    outcome["resumed"] = (other.seed, twin_optim.get_lr(), twin_schedulers[0].last_step)
    for carry_on in (model, optim_wrapper), (twin, twin_optim):
        fine_tune(*carry_on, [], data[:1], epochs=1)
    outcome["carried_on"] = model_state_dict(model)
    outcome["twin_carried_on"] = model_state_dict(twin)


def fine_tune_sharded(out, data, outcome):
    """The default ``state_dict_cfg='local'``: a folder of shards that resumes; and a built
    optimizer, which follows the sharded parameters."""
    strategy = fsdp(out / "sharded", "local")
    model, optim_wrapper = strategy.prepare(make_model(), optim_wrapper=ADAMW)
    fine_tune(model, optim_wrapper, [], data, epochs=1)
    folder = out / "sharded" / "iter_4.pth"
    strategy.save_checkpoint(str(folder))
    outcome["sharded_files"] = sorted(os.listdir(folder))
    outcome["sharded_trained"] = model_state_dict(model)
    outcome["sharded_optimizer"] = optimizer_state_dict(model, optim_wrapper)

    fresh = fsdp(out / "fresh", "local")
    fresh_model, fresh_optim = fresh.prepare(make_model(), optim_wrapper=ADAMW)
    fresh.resume(str(folder))
    outcome["sharded_resumed"] = model_state_dict(fresh_model)
    outcome["sharded_resumed_optimizer"] = optimizer_state_dict(fresh_model, fresh_optim)

    plain = make_model()
    built = OptimWrapper(torch.optim.AdamW(plain.parameters(), lr=1e-2))
    model, optim_wrapper = fsdp(out / "built", "full").prepare(plain, optim_wrapper=built)
    fine_tune(model, optim_wrapper, [], data, epochs=1)
    outcome["built_optimizer"] = model_state_dict(model)


def ddp_twins(out, data, outcome):
    strategy = DDPStrategy(work_dir=str(out / "ddp"), **QUIET)
    model, optim_wrapper = strategy.prepare(make_model(), optim_wrapper=SGD)
    outcome["ddp_wrapper"] = type(model).__name__
    train(model, optim_wrapper, data)
    outcome["ddp"] = model_state_dict(model)
    outcome["ddp_path"] = str(out / "ddp" / "iter_4.pth")
    strategy.save_checkpoint(outcome["ddp_path"])

    plain = prepare_model(make_model(), strategy="ddp")
    train(plain, OptimWrapper(torch.optim.SGD(plain.parameters(), lr=0.5, momentum=0.9)), data)
    outcome["ddp_plain"] = model_state_dict(plain)


def run_rank(rank, out_dir):
    # the strategies start the process group themselves (torchrun's environment, gloo)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    os.environ.pop("MKL_NUM_THREADS", None)  # a distributed strategy sets it, as MMEngine's
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    out, data = Path(out_dir), [rank_share(batch, rank) for batch in batches()]
    outcome = {}
    fine_tune_full(out, data, outcome)
    outcome["mkl_threads"] = os.environ.get("MKL_NUM_THREADS")
    fine_tune_sharded(out, data, outcome)
    ddp_twins(out, data, outcome)
    return outcome


@pytest.fixture(scope="module")
def ranks(tmp_path_factory, spawn_ranks):
    return spawn_ranks(run_rank, tmp_path_factory.mktemp("strategies"), WORLD_SIZE, timeout=180)


def test_a_distributed_strategy_sets_the_thread_variables_as_mmengines(ranks):
    assert [outcome["mkl_threads"] for outcome in ranks] == ["1", "1"]


def test_fsdp_strategy_starts_the_process_group_and_shards_the_blocks(ranks):
    assert ranks[0]["process"] == ("pytorch", True, WORLD_SIZE)
    assert ranks[0]["wrapped"] == ("FullyShardedModel", 3, "DTensor")  # 2 blocks and the root


def test_fsdp_strategy_fine_tunes_and_saves_a_full_checkpoint(ranks):
    for outcome in ranks:
        (first_loss, first_lr), (last_loss, last_lr) = outcome["history"]
        assert last_loss < first_loss and (first_lr, last_lr) == (1e-2, 5e-3)
    checkpoint = load_checkpoint(ranks[0]["path"])
    plain = make_model()
    plain.load_state_dict(checkpoint["state_dict"], strict=True)
    assert_same_tensors(plain.state_dict(), ranks[0]["trained"], atol=0)
    assert not torch.equal(plain.head.weight, make_model().head.weight)
    assert ranks[1]["trained"] == {}  # gathered to rank 0 only


def test_fsdp_full_checkpoint_loads_and_resumes_on_both_ranks(ranks):
    assert_same_tensors(ranks[0]["loaded"], ranks[0]["trained"], atol=0)
    for outcome in ranks:
        assert outcome["resumed"] == outcome["saved"]  # seed 42 again, not the twin's 7
        assert outcome["saved"][0] == 42 and outcome["saved"][2] > 0
    assert_same_tensors(ranks[0]["twin_carried_on"], ranks[0]["carried_on"], atol=0)


def test_fsdp_local_state_dict_saves_a_folder_of_shards_that_resumes(ranks):
    assert {".metadata", "extra.pth"} <= set(ranks[0]["sharded_files"])
    assert_same_tensors(ranks[0]["sharded_resumed"], ranks[0]["sharded_trained"], atol=0)
    resumed, saved = ranks[0]["sharded_resumed_optimizer"], ranks[0]["sharded_optimizer"]
    for name, state in saved["state"].items():
        assert_same_tensors(resumed["state"][name], state, atol=0)


def test_a_built_optimizer_follows_the_sharded_parameters(ranks):
    assert_same_tensors(ranks[0]["built_optimizer"], ranks[0]["sharded_trained"], atol=0)


def test_ddp_strategy_trains_as_plain_ddp_and_as_one_process(ranks):
    assert ranks[0]["ddp_wrapper"] == "DistributedDataParallelModel"
    for outcome in ranks:
        assert_same_tensors(outcome["ddp"], outcome["ddp_plain"], atol=0)
    model = make_model()
    train(model, OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)), batches())
    assert_same_tensors(ranks[0]["ddp"], model.state_dict(), atol=1e-5)
    assert not torch.equal(model.head.weight, make_model().head.weight)
    saved = make_model()
    saved.load_state_dict(load_checkpoint(ranks[0]["ddp_path"])["state_dict"], strict=True)
    assert_same_tensors(saved.state_dict(), ranks[0]["ddp"], atol=0)


def test_auto_scale_lr_scales_an_optim_wrapper_given_built(tmp_path):
    from runnerx.optim import OptimWrapper

    strategy = SingleDeviceStrategy(
        work_dir=str(tmp_path), auto_scale_lr=dict(enable=True, base_batch_size=16), **QUIET
    )
    model = make_model()
    built = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.5))
    _, optim_wrapper = strategy.prepare(
        model, optim_wrapper=built, dispatch_kwargs=dict(train_micro_batch_size_per_gpu=4)
    )
    assert optim_wrapper is built and optim_wrapper.get_lr()["lr"] == [0.5 * 4 / 16]
