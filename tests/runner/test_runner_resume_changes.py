"""Resuming after something changed: the batch size, the world size or the training set
mid-epoch (the data position), the config (a warning naming what changed), a schedule with
nothing left, another model, a copied work dir and a last_checkpoint naming a deleted file."""

import os
import shutil
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from runnerx import HOOKS, MODELS, Config
from runnerx.checkpoint import load_checkpoint
from runnerx.checkpoint.resume_checks import in_work_dir
from runnerx.data.examples import DigitsDataset
from runnerx.data.samplers import DefaultSampler
from runnerx.data.samplers.position import batches_to_skip, data_position
from runnerx.hooks import Hook
from runnerx.model.examples.digits_convnet import DigitsConvNet
from runnerx.runner import Runner
from tests.runner.test_runner_resume import InterruptAtIter, Interrupted, digits_cfg


@HOOKS.register_module()
class RecordBatchIndices(Hook):
    """Keeps the batch index of every training iteration (``indices``)."""

    def __init__(self):
        self.indices = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.indices.append(batch_idx)


def interrupted(cfg: Config, at: int) -> Path:
    """Train ``cfg`` until iteration ``at`` (a checkpoint every 5); the newest checkpoint."""
    first = cfg.copy()
    first.custom_hooks = [dict(type=InterruptAtIter.__name__, at=at)]
    with pytest.raises(Interrupted):
        Runner.from_cfg(first).train()
    return Path(cfg.work_dir) / f"iter_{at - at % 5}.pth"


def resumed(cfg: Config, checkpoint: Path, work_dir: Path, **changes) -> tuple[Runner, list, str]:
    """Resume ``checkpoint`` in ``work_dir`` with ``changes``: the runner, its batch indices
    and its log."""
    cfg = cfg.copy()
    cfg.merge_from_dict({"resume": str(checkpoint), "work_dir": str(work_dir), **changes})
    cfg.custom_hooks = [dict(type="RecordBatchIndices")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    (hook,) = [hook for hook in runner.hooks if isinstance(hook, RecordBatchIndices)]
    return runner, hook.indices, log_of(runner)


def log_of(runner: Runner) -> str:
    return Path(runner.log_dir, f"{runner.timestamp}.log").read_text()


@pytest.fixture(scope="module")
def mid_epoch(tmp_path_factory) -> tuple[Config, Path]:
    """The digits example (batches of 64, 23 per epoch) interrupted at iteration 33: its
    iter_30.pth is 7 batches (448 samples) into epoch 2. Resume it in another work dir."""
    cfg = digits_cfg(tmp_path_factory.mktemp("mid_epoch"))
    return cfg, interrupted(cfg, at=33)


def test_the_data_position_records_what_it_was_read_with(mid_epoch):
    _, checkpoint = mid_epoch
    position = load_checkpoint(checkpoint)["dataloader"]
    assert position["batch_size"] == 64 and position["world_size"] == 1
    assert position["dataset_len"] == len(DigitsDataset(split="train"))


@pytest.mark.parametrize("batch_size", [32, 48])
def test_a_new_batch_size_continues_after_the_samples_already_seen(tmp_path, mid_epoch, batch_size):
    """It skipped 7 batches of the new size (224 samples with 32, seen twice) before."""
    cfg, checkpoint = mid_epoch
    runner, indices, log = resumed(
        cfg, checkpoint, tmp_path, **{"train_dataloader.batch_size": batch_size}
    )
    per_epoch = len(runner.train_dataloader)
    skip, again = divmod(448, batch_size)
    assert indices == list(range(skip, per_epoch))
    seen = "the 448 samples" if not again else f"{448 - again} of the 448 samples"
    read_again = f"; the other {again} are read again" if again else ""
    assert (
        f"WARNING - resume: train_dataloader.batch_size was 64 in the checkpoint and is "
        f"{batch_size} now; epoch 2 continues after {seen} already seen (batch {skip} of "
        f"{per_epoch}{read_again})"
    ) in log


def test_a_smaller_training_set_starts_the_epoch_over(tmp_path, mid_epoch):
    cfg, checkpoint = mid_epoch
    changes = {"train_dataloader.dataset.val_ratio": 0.6}
    runner, indices, log = resumed(cfg, checkpoint, tmp_path, **changes)
    assert indices == list(range(len(runner.train_dataloader)))
    before, now = (len(DigitsDataset(split="train", val_ratio=r)) for r in (0.2, 0.6))
    assert (
        f"WARNING - resume: the training set had {before} samples and has {now} now: epoch 2 "
        "starts over"
    ) in log


def test_an_unchanged_resume_says_nothing_about_the_data(tmp_path, mid_epoch):
    cfg, checkpoint = mid_epoch
    _, indices, log = resumed(cfg, checkpoint, tmp_path)
    assert indices == list(range(7, 23))
    warnings = [line for line in log.splitlines() if "WARNING - resume:" in line]
    # the config's only change: the interrupting hook is gone (hooks: not restored, named)
    assert (
        len(warnings) == 1
        and "was saved with. Used as configured now: custom_hooks.0.type 'InterruptAtIter' "
        in warnings[0]
    )


def test_an_older_checkpoint_without_the_new_keys_still_converts_the_batch_size(
    tmp_path, mid_epoch
):
    cfg, checkpoint = mid_epoch
    saved = load_checkpoint(checkpoint)
    for key in ("batch_size", "world_size", "dataset_len"):
        del saved["dataloader"][key]
    older = tmp_path / "older.pth"
    torch.save(saved, older)
    _, indices, log = resumed(cfg, older, tmp_path, **{"train_dataloader.batch_size": 32})
    assert indices[0] == 14
    assert "was 64 in the checkpoint and is 32 now" in log


@pytest.mark.parametrize(
    ("world", "batch", "new_world", "new_batch"),
    [(2, 4, 1, 5), (2, 4, 3, 2), (1, 7, 2, 4), (3, 2, 2, 3)],
)
def test_samples_already_seen_are_the_first_of_the_epochs_order_on_any_world_size(
    world, batch, new_world, new_batch
):
    """What the docstring of batches_to_skip claims: after 3 batches on each of ``world``
    ranks, ``new_world`` ranks that skip what it says read every sample not yet seen, and
    read fewer than one step's samples again."""
    dataset = list(range(53))

    def loaders(world_size, batch_size):
        samplers = [
            DefaultSampler(dataset, seed=3, rank=rank, world_size=world_size)
            for rank in range(world_size)
        ]
        for sampler in samplers:
            sampler.set_epoch(1)
        return [(DataLoader(dataset, batch_size, sampler=s), s) for s in samplers]

    seen = []
    for loader, _ in loaders(world, batch):
        seen += [int(i) for batch_ in list(loader)[:3] for i in batch_]
    loader, sampler = loaders(world, batch)[0]
    position = data_position(loader, sampler, data_pass=1, batches=3)
    rest = []
    for loader, sampler in loaders(new_world, new_batch):
        skip, note = batches_to_skip(position, loader, sampler, "epoch 2")
        sampler.set_consumed(skip * new_batch)
        rest += [int(i) for batch_ in loader for i in batch_]
    assert set(seen) | set(rest) == set(dataset)  # nothing unseen was skipped
    assert len(set(seen) & set(rest)) < new_batch * new_world
    assert note.startswith("resume: ") and "epoch 2 continues after" in note


def two_ranks_train(rank, out_dir):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank))
    torch.set_num_threads(1)
    changes = {
        "train_cfg.max_epochs": 1,
        "launcher": "pytorch",
        "default_hooks.checkpoint.interval": 10,
    }
    cfg = digits_cfg(Path(out_dir) / "two", **changes)
    cfg.val_dataloader = cfg.val_cfg = cfg.val_evaluator = None  # training is what matters
    Runner.from_cfg(cfg).train()  # 12 batches of 64 per rank; iter_10.pth: 10 of them
    return None


def test_fewer_ranks_continue_after_the_samples_all_ranks_have_seen(tmp_path, spawn_ranks):
    spawn_ranks(two_ranks_train, tmp_path, 2, timeout=120)
    cfg = digits_cfg(tmp_path / "one", **{"train_cfg.max_epochs": 1})
    runner, indices, log = resumed(cfg, tmp_path / "two" / "iter_10.pth", tmp_path / "one")
    seen = 10 * 64 * 2
    assert indices[0] == seen // 64 and len(runner.train_dataloader) == 23
    assert (
        "WARNING - resume: the world size was 2 in the checkpoint and is 1 now; epoch 1 "
        f"continues after the {seen} samples already seen by all ranks (batch 20 of 23)"
    ) in log


def one_epoch_cfg(work_dir: Path, **changes) -> Config:
    """The digits example for one epoch, a checkpoint at its end."""
    cfg = digits_cfg(work_dir, **{"train_cfg.max_epochs": 1})
    cfg.default_hooks.checkpoint = dict(type="CheckpointHook", interval=1)
    cfg.merge_from_dict(changes)
    return cfg


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """The digits example trained for one epoch in a work dir of its own: its epoch_1.pth."""
    work = tmp_path_factory.mktemp("one_epoch") / "first"
    Runner.from_cfg(one_epoch_cfg(work)).train()
    return work / "epoch_1.pth"


@pytest.fixture
def one_epoch(tmp_path, trained) -> Path:
    """A copy of the trained work dir for this test (its last_checkpoint names the original's
    epoch_1.pth, as a copied work dir's does): the copy's epoch_1.pth."""
    shutil.copytree(trained.parent, tmp_path / "first")
    return tmp_path / "first" / "epoch_1.pth"


def test_a_changed_config_is_named_and_the_optimizer_keys_the_resume_overrides(tmp_path, one_epoch):
    cfg = one_epoch_cfg(tmp_path / "work", resume=str(one_epoch))  # another work_dir, resume
    cfg.merge_from_dict(
        {
            "optim_wrapper.optimizer.lr": 0.01,
            "default_hooks.logger.interval": 7,
            "train_cfg.max_epochs": 3,  # expected on a resume: not named
        }
    )
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.optim_wrapper.param_groups[0]["initial_lr"] == 0.1  # the checkpoint's
    (line,) = [line for line in log_of(runner).splitlines() if "config differs" in line]
    assert line.endswith(
        f"WARNING - resume: the config differs from the one {one_epoch} was saved with. Used "
        "as configured now: default_hooks.logger.interval 10 -> 7. Not used, the restored "
        "state wins: optim_wrapper.optimizer.lr 0.1 -> 0.01 (a resume restores the optimizer "
        "and the parameter schedulers as saved: exact resume, as in MMEngine). To train with "
        f"the new values, start a new run from these weights: load_from='{one_epoch}' and "
        "resume=False"
    )


def test_the_saved_config_text_is_read_never_run(tmp_path, one_epoch):
    saved = load_checkpoint(one_epoch)
    flag = tmp_path / "ran"
    saved["meta"]["cfg"] += f"\nhook = open({str(flag)!r}, 'w')\n"  # runs only if executed
    torch.save(saved, one_epoch)
    runner = Runner.from_cfg(one_epoch_cfg(tmp_path / "work", resume=str(one_epoch)))
    runner.train()
    assert not flag.exists()
    (line,) = [line for line in log_of(runner).splitlines() if "config differs" in line]
    assert "was saved with. Used as configured now: hook open('" in line  # shown
    assert line.endswith("-> (absent)")


def test_many_config_changes_are_capped(tmp_path, one_epoch):
    changes = {f"my_value{n}": n for n in range(10)}  # a config's own variables
    runner = Runner.from_cfg(one_epoch_cfg(tmp_path / "work", resume=str(one_epoch), **changes))
    runner.train()
    (line,) = [line for line in log_of(runner).splitlines() if "config differs" in line]
    shown = ", ".join(f"my_value{n} (absent) -> {n}" for n in range(8))
    assert line.endswith(f"was saved with. Used as configured now: {shown} (and 2 more)")


def test_resuming_with_nothing_left_to_train_says_so(tmp_path, one_epoch):
    cfg = digits_cfg(tmp_path / "work", resume=str(one_epoch), **{"train_cfg.max_epochs": 1})
    runner = Runner.from_cfg(cfg)
    runner.train()
    assert runner.iter == 23  # nothing trained, as in MMEngine
    assert (
        f"WARNING - resume: train_cfg.max_epochs=1 but {one_epoch} is at epoch 1: nothing "
        "left to train; raise train_cfg.max_epochs to train on"
    ) in log_of(runner)


@MODELS.register_module()
class WiderDigitsConvNet(DigitsConvNet):
    """The digits model with one more layer (a model changed between runs)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.extra = nn.Linear(2, 2)


def test_resuming_another_model_names_the_keys_and_the_cure(tmp_path, one_epoch):
    cfg = digits_cfg(tmp_path / "work", resume=str(one_epoch))
    cfg.model.type = "WiderDigitsConvNet"
    runner = Runner.from_cfg(cfg)
    with pytest.raises(RuntimeError) as caught:
        runner.train()
    assert str(caught.value) == (
        f"resume: the model does not match the checkpoint {one_epoch} (missing: extra.weight, "
        "extra.bias): resuming needs the model the checkpoint was saved from; to start the "
        f"changed model from these weights, set load_from='{one_epoch}' and resume=False (it "
        "loads the weights that fit and names the rest)"
    )


def test_a_copied_work_dir_resumes_its_own_checkpoint(trained, one_epoch):
    copy = one_epoch.parent
    assert (copy / "last_checkpoint").read_text() == str(trained)  # the original's path
    cfg = one_epoch_cfg(copy, resume=True, **{"train_cfg.max_epochs": 2})
    runner = Runner.from_cfg(cfg)
    runner.train()
    log = log_of(runner)
    assert f"resumed from {copy / 'epoch_1.pth'}: 1 epoch (23 iterations) done, epoch 2" in log
    assert (
        f"{copy}/last_checkpoint names {trained}, outside this work dir (copied or moved?): "
        f"taken to mean this work dir's {copy / 'epoch_1.pth'}"
    ) in log
    assert "holds the checkpoints of an earlier run" not in log  # the resumed run's own
    assert (copy / "last_checkpoint").read_text() == str(copy / "epoch_2.pth")  # as MMEngine
    assert not (trained.parent / "epoch_2.pth").exists()


def test_last_checkpoint_in_checkpoint_hooks_out_dir_is_kept(tmp_path):
    """CheckpointHook(out_dir=...) saves outside the work dir: last_checkpoint names that file,
    even when the work dir holds one of the same name (from an earlier run)."""
    work, out = tmp_path / "work", tmp_path / "out" / "work"
    for folder in (work, out):
        folder.mkdir(parents=True)
        (folder / "epoch_1.pth").write_bytes(b"")
    assert in_work_dir(str(work), str(out / "epoch_1.pth")) == str(out / "epoch_1.pth")
    (out / "last_checkpoint").write_text("")  # the folder of another work dir: a copy
    assert in_work_dir(str(work), str(out / "epoch_1.pth")) == str(work / "epoch_1.pth")
    (out / "epoch_1.pth").unlink()  # moved away: the work dir's file of that name
    (out / "last_checkpoint").unlink()
    assert in_work_dir(str(work), str(out / "epoch_1.pth")) == str(work / "epoch_1.pth")


def test_last_checkpoint_naming_a_deleted_file_names_the_newest_one_left(tmp_path, one_epoch):
    work = one_epoch.parent
    gone = work / "epoch_2.pth"
    (work / "last_checkpoint").write_text(str(gone))
    runner = Runner.from_cfg(digits_cfg(work, resume=True))
    with pytest.raises(FileNotFoundError) as caught:
        runner.train()
    assert str(caught.value) == (
        f"resume: {work}/last_checkpoint names {gone}, which no longer exists; the newest "
        f"checkpoint in {work} is epoch_1.pth: resume from it with resume='{one_epoch}' "
        f"(tools/train.py --resume {one_epoch})"
    )
