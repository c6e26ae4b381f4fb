"""Objects the user's script built, given to build_dataloader or the Runner: a shuffling
DataLoader gets a seeded generator, and the mistakes (a DataLoader as the dataset, a dataset
without a length, an optimizer as the optim wrapper) name the key to fix."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, RandomSampler, Sampler

from runnerx.data import build_dataloader
from runnerx.data.build import length_of
from runnerx.evaluator import Accuracy
from runnerx.model import BaseModel
from runnerx.runner import Runner


class Stream(IterableDataset):
    """An endless stream of samples, without ``__len__``."""

    def __iter__(self):
        index = 0
        while True:
            yield {"inputs": torch.full((4,), float(index % 5)), "labels": torch.tensor(index % 2)}
            index += 1


class Net(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, inputs, labels, mode="tensor"):
        logits = self.fc(inputs)
        return {"loss": nn.functional.cross_entropy(logits, labels)} if mode == "loss" else logits


def order(loader: DataLoader) -> list[int]:
    return [int(i) for batch in loader for i in batch]


def test_a_shuffling_dataloader_gets_one_seeded_generator_for_its_sampler_and_workers():
    loaders = [DataLoader(range(16), batch_size=4, shuffle=True) for _ in range(2)]
    for loader in loaders:
        assert build_dataloader(loader, seed=5) is loader
        assert loader.sampler.generator is loader.generator is not None
    torch.manual_seed(0)
    first = order(loaders[0])
    torch.manual_seed(1)  # the global RNG no longer decides the order
    assert order(loaders[1]) == first


def test_a_loader_given_to_a_second_runner_reads_the_order_a_fresh_one_does():
    loader = DataLoader(range(16), batch_size=4, shuffle=True)
    build_dataloader(loader, seed=5)
    first = order(loader)
    build_dataloader(loader, seed=5)  # the next Runner seeds it anew
    assert order(loader) == first


def test_a_users_generator_and_sampler_are_left_as_they_are():
    generator = torch.Generator().manual_seed(3)
    own = DataLoader(range(8), shuffle=True, generator=generator)
    build_dataloader(own, seed=5)
    assert own.sampler.generator is generator and own.generator is generator

    class Backwards(Sampler):
        def __iter__(self):
            return iter(range(7, -1, -1))

        def __len__(self):
            return 8

    custom = DataLoader(range(8), sampler=Backwards())
    build_dataloader(custom, seed=5)
    assert custom.generator is None
    unseeded = DataLoader(range(8), sampler=RandomSampler(range(8)))
    build_dataloader(unseeded)  # no seed (a script's own call): nothing to seed it with
    assert unseeded.sampler.generator is None


def test_a_dataloader_given_as_the_dataset_is_refused_naming_the_key():
    inner = DataLoader(range(8), batch_size=2)
    cfg = {"dataset": inner, "sampler": {"type": "DefaultSampler"}, "batch_size": 2}
    with pytest.raises(TypeError) as error:
        build_dataloader(cfg, cfg_key="val_dataloader")
    assert str(error.value).startswith(
        "val_dataloader.dataset is a DataLoader; pass it as val_dataloader itself"
    )


def test_the_length_of_an_iterable_dataset_without_one_names_the_key():
    loader = DataLoader(Stream(), batch_size=2)
    assert length_of(loader) is None
    with pytest.raises(TypeError, match=r"^val_dataloader has no length: its dataset, Stream, "):
        length_of(loader, "val_dataloader")
    assert length_of(DataLoader(range(5), batch_size=2), "val_dataloader") == 3


def runner(tmp_path, **changes) -> Runner:
    settings = {
        "model": Net(),
        "work_dir": str(tmp_path),
        "train_dataloader": DataLoader(Stream(), batch_size=4),
        "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.1}},
        "train_cfg": {"by_epoch": False, "max_iters": 3},
        "param_scheduler": [{"type": "MultiStepLR", "milestones": [2], "by_epoch": False}],
        **changes,
    }
    return Runner(**settings)


def test_an_endless_stream_trains_by_iterations_and_an_epoch_based_loop_says_why_not(tmp_path):
    trained = runner(tmp_path / "iters")
    trained.train()
    assert trained.iter == 3
    with pytest.raises(TypeError) as error:
        runner(tmp_path / "epochs", train_cfg={"by_epoch": True, "max_epochs": 2}).train()
    message = str(error.value)
    assert "train_dataloader has no length" in message
    assert "define __len__" in message
    assert "train_cfg=dict(by_epoch=False, max_iters=...)" in message
    with pytest.raises(TypeError, match=r"^val_dataloader has no length: its dataset, Stream, "):
        runner(
            tmp_path / "val",
            val_dataloader=DataLoader(Stream(), batch_size=4),
            val_cfg={},
            val_evaluator=Accuracy(),
        ).val()


def test_a_schedule_in_epochs_over_a_stream_without_a_length_says_to_count_iterations(tmp_path):
    epochs = {"type": "MultiStepLR", "milestones": [2], "convert_to_iter_based": True}
    with pytest.raises(ValueError, match=r"a train_dataloader without a length .* by_epoch=False"):
        runner(tmp_path, param_scheduler=[epochs]).train()


def test_an_optimizer_given_as_the_optim_wrapper_says_how_to_wrap_it(tmp_path):
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    with pytest.raises(TypeError) as error:
        runner(tmp_path, model=model, optim_wrapper=optimizer).train()
    assert str(error.value) == (
        "optim_wrapper is an optimizer (SGD): pass OptimWrapper(optimizer=it) or dict(optimizer=it)"
    )
