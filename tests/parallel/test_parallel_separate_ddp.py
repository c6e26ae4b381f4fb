"""MMSeparateDistributedDataParallel with two real ranks (spawned processes, gloo): a GAN-like
model with its own train_step and two optimizers trains under a Runner, each rank on half of
every batch, and ends where one process on the whole batches ends; its checkpoint has the
plain model's keys and resumes. In one process the Runner does not wrap."""

import os
from datetime import timedelta

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import Dataset

from runnerx import MODELS
from runnerx.model import BaseModel, MMSeparateDistributedDataParallel, is_model_wrapper
from runnerx.parallel import DistributedDataParallelModel, unwrap
from runnerx.runner import Runner

WORLD_SIZE = 2
BATCH = 4  # one process's batch; each rank takes half
SAMPLES = 16


@MODELS.register_module()
class SeparateDDPToyGAN(BaseModel):
    """A generator and a discriminator stepped by their own optimizers (as train_a_gan.md),
    a frozen layer and a layer without parameters. The noise comes with the data, so that
    the ranks together see what one process sees."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.generator = nn.Linear(2, 4)
        self.discriminator = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 1))
        self.frozen = nn.Linear(4, 4).requires_grad_(False)
        self.activation = nn.Tanh()

    def forward(self, inputs, noise, mode="tensor"):
        return self.activation(self.frozen(self.generator(noise)))

    def train_step(self, data, optim_wrapper):
        data = self.data_preprocessor(data, True)
        real, noise = data["inputs"], data["noise"]
        disc_wrapper, gen_wrapper = optim_wrapper["discriminator"], optim_wrapper["generator"]
        # the generator's step left gradients on the discriminator: not saved in checkpoints
        disc_wrapper.zero_grad()
        with disc_wrapper.optim_context(self.discriminator):
            with torch.no_grad():
                fake = self.generator(noise)
            losses = dict(
                loss_disc_fake=self.discriminator(fake).pow(2).mean(),
                loss_disc_real=(self.discriminator(real) - 1).pow(2).mean(),
            )
        loss, log_vars = self.parse_losses(losses)
        disc_wrapper.update_params(loss)
        with gen_wrapper.optim_context(self.generator):
            fake = self.frozen(self.generator(noise))
            losses = dict(loss_gen=(self.discriminator(fake) - 1).pow(2).mean())
        loss, log_gen = self.parse_losses(losses)
        gen_wrapper.update_params(loss)
        return {**log_vars, **log_gen}


class RealAndNoise(Dataset):
    """SAMPLES pairs of a real sample (4 values) and a noise vector (2 values)."""

    def __init__(self):
        generator = torch.Generator().manual_seed(1)
        self.real = torch.randn(SAMPLES, 4, generator=generator) + 2
        self.noise = torch.randn(SAMPLES, 2, generator=generator)

    def __len__(self):
        return SAMPLES

    def __getitem__(self, index):
        return dict(inputs=self.real[index], noise=self.noise[index])


def make_runner(work_dir, batch_size, max_epochs, launcher="none", resume=False):
    optimizer = dict(type="SGD", lr=0.1, momentum=0.9)
    return Runner(
        model=dict(type="SeparateDDPToyGAN"),
        work_dir=str(work_dir),
        train_dataloader=dict(
            dataset=RealAndNoise(),
            batch_size=batch_size,
            num_workers=0,
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
        optim_wrapper=dict(
            generator=dict(optimizer=optimizer), discriminator=dict(optimizer=optimizer)
        ),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
        launcher=launcher,
        resume=resume,
        randomness=dict(seed=0),
        cfg=dict(model_wrapper_cfg=dict(type="MMSeparateDistributedDataParallel")),
    )


def plain_state(model):
    return {key: value.detach().clone() for key, value in unwrap(model).state_dict().items()}


def run_rank(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    work_dir = os.path.join(out_dir, "work")
    runner = make_runner(work_dir, BATCH // WORLD_SIZE, max_epochs=2, launcher="pytorch")
    wrapper, model = runner.model, runner.model.module
    outcome = {
        "wrapper": type(wrapper).__name__,
        "children": {name: type(child).__name__ for name, child in model.named_children()},
        "unwrapped": unwrap(wrapper) is model and is_model_wrapper(wrapper),
    }
    with wrapper.no_sync():
        outcome["syncing_in_no_sync"] = [
            child.require_backward_grad_sync
            for child in model.children()
            if isinstance(child, DistributedDataParallelModel)
        ]
    wrapper.train(False)
    outcome["training_after_train_false"] = [m.training for m in wrapper.modules()]
    runner.train()
    outcome["after_2_epochs"] = plain_state(wrapper)
    outcome["wrapper_state_dict_keys"] = sorted(wrapper.state_dict())
    sample = RealAndNoise()[0]
    batch = dict(inputs=sample["inputs"][None], noise=sample["noise"][None])
    with torch.no_grad():
        outcome["val_step"] = wrapper.val_step(batch)
    dist.barrier()  # rank 0 has written epoch_2.pth before the resumed run looks for it
    resumed = make_runner(work_dir, BATCH // WORLD_SIZE, 3, launcher="pytorch", resume=True)
    resumed.train()
    outcome["resumed_after_3_epochs"] = plain_state(resumed.model)
    return outcome


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, spawn_ranks):
    out_dir = tmp_path_factory.mktemp("separate_ddp")
    return out_dir, spawn_ranks(run_rank, out_dir, WORLD_SIZE, timeout=120)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """The reference: one process training on the whole batches, 2 then 3 epochs."""
    work_dir = tmp_path_factory.mktemp("one_process")
    runner = make_runner(work_dir / "two", BATCH, max_epochs=2)
    runner.train()
    three = make_runner(work_dir / "three", BATCH, max_epochs=3)
    three.train()
    return runner, plain_state(runner.model), plain_state(three.model)


def assert_same_states(actual, expected):
    assert actual.keys() == expected.keys()
    for key, value in expected.items():
        torch.testing.assert_close(actual[key], value, atol=1e-6, rtol=0, msg=key)


def test_each_child_with_trainable_parameters_gets_its_own_ddp(outcomes):
    _, ranks = outcomes
    assert ranks[0]["wrapper"] == "SeparateDistributedDataParallelModel"
    children = ranks[0]["children"]
    assert children["frozen"] == "Linear" and children["activation"] == "Tanh"
    for name in ("generator", "discriminator"):
        assert children[name] == "_ChildDistributedDataParallel"
    assert ranks[0]["unwrapped"]


def test_no_sync_and_train_reach_every_wrapped_child(outcomes):
    _, ranks = outcomes
    assert ranks[0]["syncing_in_no_sync"] == [False, False]
    assert not any(ranks[0]["training_after_train_false"])


def test_two_ranks_end_with_the_weights_of_one_process_with_the_whole_batch(outcomes, one_process):
    _, ranks = outcomes
    _, after_two, _ = one_process
    for rank in ranks:
        assert_same_states(rank["after_2_epochs"], after_two)
    assert not torch.equal(after_two["generator.weight"], SeparateDDPToyGAN().generator.weight)


def test_the_checkpoint_has_the_plain_keys_and_resumes(outcomes, one_process):
    out_dir, ranks = outcomes
    _, after_two, after_three = one_process
    checkpoint = torch.load(out_dir / "work" / "epoch_2.pth", weights_only=True)
    assert list(checkpoint["state_dict"]) == list(after_two)
    assert_same_states(checkpoint["state_dict"], after_two)
    assert checkpoint["optimizer"].keys() == {"generator", "discriminator"}
    assert sorted(ranks[0]["wrapper_state_dict_keys"]) == sorted(f"module.{k}" for k in after_two)
    # resuming restores the momentum too: epoch 3 ends as an unbroken 3-epoch run
    for rank in ranks:
        assert_same_states(rank["resumed_after_3_epochs"], after_three)


def test_val_step_is_the_models_own(outcomes, one_process):
    _, ranks = outcomes
    runner, _, _ = one_process
    sample = RealAndNoise()[0]
    with torch.no_grad():
        expected = runner.model.val_step(
            dict(inputs=sample["inputs"][None], noise=sample["noise"][None])
        )
    torch.testing.assert_close(ranks[0]["val_step"], expected, atol=1e-6, rtol=0)


def test_one_process_runs_the_model_unwrapped(one_process):
    runner, _, _ = one_process
    assert type(runner.model) is SeparateDDPToyGAN
    assert type(runner.model.generator) is nn.Linear


def test_an_unknown_ddp_option_names_model_wrapper_cfg():
    with pytest.raises(TypeError, match="model_wrapper_cfg.*'find_unused_params'"):
        MMSeparateDistributedDataParallel(SeparateDDPToyGAN(), find_unused_params=True)


def test_the_one_optimizer_wrappers_step_points_a_gan_to_the_separate_wrapper():
    from runnerx.optim import build_optim_wrapper
    from runnerx.parallel.steps import WrappedModelSteps

    class Wrapped(WrappedModelSteps):
        module = SeparateDDPToyGAN()

    optimizer = dict(type="SGD", lr=0.1)
    model = Wrapped.module
    optim_wrapper = build_optim_wrapper(
        model, dict(generator=dict(optimizer=optimizer), discriminator=dict(optimizer=optimizer))
    )
    with pytest.raises(TypeError, match="MMSeparateDistributedDataParallel"):
        Wrapped().train_step({}, optim_wrapper)
