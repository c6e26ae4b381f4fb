"""CheckpointHook and LoggerHook with ``out_dir`` in a registered storage backend (a real one,
``store://<key>`` kept as files under a temporary folder), in a real Runner: checkpoints are
written to the work dir as always and copied to the store once complete, old ones go from
both, a resume reads the work dir, ``load_from`` reads the store, logs land in the store."""

# ruff: noqa: F811

from __future__ import annotations

import os

import pytest
import torch

from runnerx.fileio import register_backend

# The checkpoint tests' Runner factory (a tiny classifier, a scripted metric), imported as a
# fixture: the test functions' make_runner argument is it (hence the file-wide F811).
from tests.checkpoint.conftest import make_runner  # noqa: F401
from tests.fileio.dir_store import PREFIX, DirStoreBackend


@pytest.fixture
def store(tmp_path, restore_backends, monkeypatch):
    """The folder behind ``store://``, with DirStoreBackend registered for the prefix."""
    monkeypatch.setenv("STORE_ROOT", str(tmp_path / "store"))
    register_backend("dirstore", DirStoreBackend, prefixes="store")
    return tmp_path / "store"


def pth_files(folder) -> list[str]:
    return sorted(name for name in os.listdir(folder) if name.endswith(".pth"))


def read_bytes(path) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def log_text(runner) -> str:
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        return file.read()


def assert_same_files(local_dir, store_dir):
    assert pth_files(store_dir) == pth_files(local_dir)
    for name in pth_files(local_dir):
        assert read_bytes(store_dir / name) == read_bytes(os.path.join(local_dir, name)), name


def test_checkpoints_are_copied_once_complete_and_old_ones_go_from_both(make_runner, store):
    runner = make_runner(
        {
            "interval": 1,
            "max_keep_ckpts": 2,
            "out_dir": "store://ckpts",
            "save_best": "scripted/score",
            "rule": "greater",
        },
        max_epochs=3,
        scores=[0.5, 0.9, 0.7],
    )
    runner.train()
    work = runner.work_dir
    assert pth_files(work) == ["best_scripted_score_epoch_2.pth", "epoch_2.pth", "epoch_3.pth"]
    # the store holds the final bytes of each (epoch_2 was written again after its new best)
    assert_same_files(work, store / "ckpts" / "work")
    with open(os.path.join(work, "last_checkpoint")) as file:
        assert file.read() == os.path.join(work, "epoch_3.pth")  # a resume reads the work dir
    log = log_text(runner)
    assert f"copied to {PREFIX}ckpts/work once complete" in log
    assert f"is uploaded to {PREFIX}ckpts/work/epoch_3.pth" in log
    assert f"Removed its copy {PREFIX}ckpts/work/epoch_1.pth" in log
    assert f"Removed its copy {PREFIX}ckpts/work/best_scripted_score_epoch_1.pth" in log


def test_a_failed_upload_is_logged_keeps_the_older_copy_and_fails_the_run_at_its_end(
    make_runner, store, monkeypatch
):
    copy = DirStoreBackend.copyfile_from_local

    def refuse_the_second(self, src, dst):
        if src.endswith("epoch_2.pth"):
            raise ConnectionError("the store is down")
        return copy(self, src, dst)

    monkeypatch.setattr(DirStoreBackend, "copyfile_from_local", refuse_the_second)
    runner = make_runner({"interval": 1, "max_keep_ckpts": 1, "out_dir": "store://ckpts"})
    with pytest.raises(ConnectionError, match="the store is down"):
        runner.train()  # the writer thread's error, when the run waits for its writes
    assert pth_files(runner.work_dir) == ["epoch_2.pth"]  # complete and kept locally
    assert pth_files(store / "ckpts" / "work") == ["epoch_1.pth"]  # the older copy is kept
    log = log_text(runner)
    # logged by the writer thread as it failed, with what is safe
    assert (
        f"Uploading the checkpoint {os.path.join(runner.work_dir, 'epoch_2.pth')} to "
        f"{PREFIX}ckpts/work/epoch_2.pth failed (ConnectionError: the store is down); the local "
        "checkpoint is complete and kept, and so are the store's older copies."
    ) in log
    assert f"Kept its copy {PREFIX}ckpts/work/epoch_1.pth" in log


def test_resume_reads_the_work_dir_and_max_keep_ckpts_carries_over_in_both(make_runner, store):
    hook = {"interval": 1, "max_keep_ckpts": 2, "out_dir": "store://ckpts"}
    make_runner(hook, max_epochs=2).train()
    store_dir = store / "ckpts" / "work"
    assert pth_files(store_dir) == ["epoch_1.pth", "epoch_2.pth"]
    resumed = make_runner({**hook, "max_keep_ckpts": 1}, max_epochs=3, resume=True)
    resumed.train()
    local_epoch_2 = os.path.join(resumed.work_dir, "epoch_2.pth")
    resumed_line = f"resumed from {local_epoch_2}: 2 epochs (8 iterations) done, epoch 3 starts"
    assert resumed_line in log_text(resumed)
    assert pth_files(resumed.work_dir) == ["epoch_3.pth"]
    assert_same_files(resumed.work_dir, store_dir)


def test_load_from_a_store_path_loads_the_weights(make_runner, store, tmp_path):
    trained = make_runner({"interval": 1, "out_dir": "store://ckpts"}, max_epochs=1)
    trained.train()
    fresh = make_runner(
        None, work_dir=str(tmp_path / "other"), load_from="store://ckpts/work/epoch_1.pth"
    )
    before = {key: value.clone() for key, value in fresh.unwrapped_model.state_dict().items()}
    fresh.load_or_resume()
    loaded = fresh.unwrapped_model.state_dict()
    for key, value in trained.unwrapped_model.state_dict().items():
        assert torch.equal(loaded[key], value), key
        assert not torch.equal(before[key], value), key  # the load changed them


@pytest.mark.parametrize("keep_local", [True, False])
def test_logger_hook_copies_the_log_files_to_the_store(make_runner, store, keep_local):
    logger = {"type": "LoggerHook", "interval": 1, "out_dir": "store://logs"}
    runner = make_runner(
        max_epochs=1,
        default_hooks={"logger": {**logger, "keep_local": keep_local}, "checkpoint": None},
    )
    runner.train()
    copies = store / "logs" / "work"
    copied = sorted(
        os.path.relpath(os.path.join(folder, name), copies)
        for folder, _, names in os.walk(copies)
        for name in names
    )
    timestamp = runner.timestamp
    assert f"{timestamp}.log" in copied
    assert os.path.join("vis_data", "scalars.json") in copied
    assert "Epoch(train)" in (copies / f"{timestamp}.log").read_text()
    local = [os.path.join(runner.log_dir, name) for name in copied]
    if keep_local:
        for name, path in zip(copied, local):
            if name.endswith(".log"):  # the local log has the lines about the copy too
                assert read_bytes(path).startswith(read_bytes(copies / name))
            else:
                assert read_bytes(path) == read_bytes(copies / name), name
    else:
        assert not any(os.path.exists(path) for path in local)


@pytest.mark.parametrize(
    ("hook", "key"),
    [
        ({"checkpoint": {"type": "CheckpointHook", "out_dir": "nostore://x"}}, "checkpoint"),
        (
            {
                "checkpoint": {"type": "CheckpointHook", "interval": 1},
                "logger": {
                    "type": "LoggerHook",
                    "out_dir": "logs",
                    "backend_args": {"backend": "nostore"},
                },
            },
            "logger",
        ),
    ],
    ids=["checkpoint-prefix", "logger-backend-name"],
)
def test_an_unknown_backend_is_an_error_when_the_runner_is_built(make_runner, hook, key):
    with pytest.raises(ValueError, match=rf"default_hooks\.{key}\.out_dir") as caught:
        make_runner(default_hooks=hook)
    assert f"default_hooks.{key}.backend_args" in str(caught.value)
    assert "runnerx.fileio.register_backend(" in str(caught.value)


def test_a_store_that_cannot_remove_is_refused_when_old_copies_must_go(store):
    from runnerx.hooks import CheckpointHook

    class WriteOnce(DirStoreBackend):
        remove = None  # an append-only bucket

    register_backend("writeonce", WriteOnce, prefixes="once")
    CheckpointHook(interval=1, out_dir="once://ckpts")  # keeps everything: fine
    with pytest.raises(ValueError, match="default_hooks.checkpoint.out_dir: removing .* remove"):
        CheckpointHook(interval=1, out_dir="once://ckpts", max_keep_ckpts=2)
