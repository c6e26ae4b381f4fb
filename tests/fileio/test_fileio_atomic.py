"""Failed writes of ``atomic_write``: in the background (once a write fails, nothing its
Runner queued after it runs, the failure is there to ask for at once, and waiting raises it,
then forgets it; another Runner's wait only logs it) and in the foreground (the error names
the file, or is the Ctrl-C that stopped it)."""

from __future__ import annotations

import errno
import os
import tempfile
import threading
import traceback

import pytest
import torch

from runnerx.fileio import after_pending_writes, atomic_write, failed_write, wait_for_pending_writes
from runnerx.fileio.atomic import queued_by


class HeldDisk:
    """``os.replace`` on the writer thread: it waits until ``release()`` (so that all the test
    queues is queued behind the first write), and fails as on a full disk for ``full`` names."""

    def __init__(self, full: set[str]) -> None:
        self.full = full
        self.gate = threading.Event()
        self.real = os.replace

    def replace(self, src, dst, *args, **kwargs):
        self.gate.wait(10)
        if os.path.basename(dst) in self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        return self.real(src, dst, *args, **kwargs)

    def release(self) -> None:
        self.gate.set()
        wait_for_pending_writes(raise_errors=False)


@pytest.fixture
def disk(monkeypatch):
    held = HeldDisk({"b.pth"})
    monkeypatch.setattr(os, "replace", held.replace)
    yield held
    held.gate.set()
    try:  # leave no failure behind for the next test
        wait_for_pending_writes()
    except OSError:
        pass


def write(path, text):
    with atomic_write(path, background=True) as file:
        file.write(text)


def test_actions_queued_after_a_failed_write_do_not_run(tmp_path, disk):
    done = []
    write(tmp_path / "a.pth", "a")
    after_pending_writes(lambda: done.append("after a"))
    write(tmp_path / "b.pth", "b")  # the disk is full
    after_pending_writes(lambda: done.append("after b"))
    write(tmp_path / "c.pth", "c")  # a write still runs: it leaves the whole file or none
    after_pending_writes(lambda: done.append("after c"))
    disk.release()
    path, error = failed_write()
    assert path == str(tmp_path / "b.pth") and error.errno == errno.ENOSPC
    after_pending_writes(lambda: done.append("now"))  # nothing pending: still not run
    assert done == ["after a"]
    assert sorted(os.listdir(tmp_path)) == ["a.pth", "c.pth"]  # no temporary file left
    with pytest.raises(OSError) as raised:  # named after the file, not its temporary
        wait_for_pending_writes()
    assert str(raised.value) == f"[Errno 28] No space left on device: '{tmp_path / 'b.pth'}'"
    assert failed_write() is None  # raised once, then forgotten: the next run starts clean
    after_pending_writes(lambda: done.append("next run"))
    assert done == ["after a", "next run"]


def test_a_failed_independent_action_lets_the_later_ones_run(tmp_path, disk):
    done = []

    def upload():
        raise ConnectionError("the store is down")

    write(tmp_path / "a.pth", "a")
    after_pending_writes(upload, independent=True)
    after_pending_writes(lambda: done.append("remove older"))
    disk.release()
    assert failed_write() is None
    assert done == ["remove older"]
    with pytest.raises(ConnectionError):  # still raised when the run waits at its end
        wait_for_pending_writes()


class Run:
    """A stand-in for a Runner: what ``queued_by`` marks queued work with."""


def test_a_failed_write_concerns_the_runner_that_queued_it_only(tmp_path, disk, current_log):
    first, second, done = Run(), Run(), []
    with queued_by(first):
        write(tmp_path / "b.pth", "b")  # the disk is full
        after_pending_writes(lambda: done.append("first's"))
    with queued_by(second):  # queued behind it, but not held back by another's failure
        after_pending_writes(lambda: done.append("second's"))
    disk.release()
    assert done == ["second's"]
    assert failed_write(second) is None
    assert failed_write(first)[0] == failed_write()[0] == str(tmp_path / "b.pth")
    with queued_by(first):  # the first's actions stay held back
        after_pending_writes(lambda: done.append("first's later"))
    wait_for_pending_writes(owner=second)  # waits, and only logs the other's failure
    assert len(current_log) == 1 and "another Runner" in current_log[0]
    assert f"[Errno 28] No space left on device: '{tmp_path / 'b.pth'}'" in current_log[0]
    assert failed_write(first)[0] == str(tmp_path / "b.pth")  # kept for its own Runner
    wait_for_pending_writes(owner=second)
    assert len(current_log) == 1  # logged once
    with pytest.raises(OSError, match="b.pth"):
        wait_for_pending_writes(owner=first)
    assert failed_write() is None  # raised to its Runner, so forgotten
    assert done == ["second's"]


def test_a_failure_is_raised_to_its_runner_and_unmarked_work_concerns_all(tmp_path, disk):
    first, second = Run(), Run()
    with queued_by(first):
        write(tmp_path / "b.pth", "b")
    disk.release()
    with pytest.raises(OSError, match="b.pth"):
        wait_for_pending_writes(owner=first)
    write(tmp_path / "b.pth", "b")  # queued by no Runner: every Runner's concern
    disk.release()
    assert failed_write(second)[0] == str(tmp_path / "b.pth")
    with pytest.raises(OSError, match="b.pth"):
        wait_for_pending_writes(owner=second)


def test_a_failed_write_in_the_foreground_names_its_file(tmp_path, disk, monkeypatch):
    disk.gate.set()
    with pytest.raises(OSError) as raised, atomic_write(tmp_path / "b.pth") as file:
        file.write("b")
    assert isinstance(raised.value.__cause__, OSError)
    assert str(raised.value) == f"[Errno 28] No space left on device: '{tmp_path / 'b.pth'}'"

    def full(descriptor):  # the disk fills while the data is flushed
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with (
        pytest.raises(OSError, match=r"\[Errno 28\] No space left on device: '.*a\.pth'$"),
        atomic_write(tmp_path / "a.pth") as file,
    ):
        file.write("a")
    with (
        pytest.raises(FileNotFoundError, match="missing'$"),  # the block's own error: as it is
        atomic_write(tmp_path / "a.pth"),
    ):
        (tmp_path / "missing").read_text()
    assert os.listdir(tmp_path) == []  # no temporary file left


class CutShort:
    """A file object over ``file`` whose first write past ``size`` bytes raises ``error`` (once,
    as a signal or a disk that fills, then frees, would)."""

    def __init__(self, file, error: BaseException, size: int) -> None:
        self.file, self.error, self.size = file, error, size

    def write(self, data) -> int:
        if self.error is not None and self.file.tell() + memoryview(data).nbytes > self.size:
            error, self.error = self.error, None
            raise error
        return self.file.write(data)

    def flush(self) -> None:
        self.file.flush()


@pytest.mark.parametrize(
    "error, expected",
    [
        (KeyboardInterrupt(), "Ctrl-C"),
        (OSError(errno.ENOSPC, "No space left on device"), "[Errno 28] No space left on device"),
    ],
)
def test_an_error_under_torch_zip_writer_is_raised_not_its_runtime_error(tmp_path, error, expected):
    # torch.save's zip writer, closing the archive, raises "unexpected pos ..." over the error
    path = tmp_path / "epoch_3.pth"
    torch.save({"w": torch.ones(3)}, path)
    with pytest.raises(type(error)) as raised, atomic_write(path, binary=True) as file:
        torch.save({"w": torch.zeros(10_000)}, CutShort(file, error, 20_000))
    if expected == "Ctrl-C":
        assert raised.value is error and raised.value.__suppress_context__
    else:
        assert str(raised.value) == f"{expected}: '{path}'"
        assert raised.value.__cause__ is error
    assert os.listdir(tmp_path) == ["epoch_3.pth"]  # no temporary file left
    assert torch.equal(torch.load(path)["w"], torch.ones(3))  # the old checkpoint is intact


def test_the_blocks_own_runtime_error_over_an_os_error_is_raised_as_it_is(tmp_path):
    with pytest.raises(RuntimeError, match="^no config$"), atomic_write(tmp_path / "a.py"):
        try:
            (tmp_path / "missing.py").read_text()
        except OSError:
            raise RuntimeError("no config")  # noqa: B904 (an implicit context, as torch's)
    assert os.listdir(tmp_path) == []


class FullOnClose(CutShort):
    """A :class:`CutShort` file whose close fails too (the buffered rest cannot be flushed)."""

    def __enter__(self) -> FullOnClose:
        return self

    def __exit__(self, *exc_info) -> None:
        self.file.close()
        raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("writer", ["torch.save", "write"])
def test_a_close_that_fails_again_shows_the_disks_error_once(tmp_path, monkeypatch, writer):
    real_fdopen = os.fdopen
    full = OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(
        os,
        "fdopen",
        lambda *args, **kwargs: FullOnClose(real_fdopen(*args, **kwargs), full, 20_000),
    )
    path = tmp_path / "iter_40.pth"
    with pytest.raises(OSError) as raised, atomic_write(path, binary=True) as file:
        if writer == "torch.save":  # its zip writer raises "unexpected pos ..." over the error
            torch.save({"w": torch.zeros(10_000)}, file)
        else:
            file.write(bytes(30_000))
    assert str(raised.value) == f"[Errno 28] No space left on device: '{path}'"
    closing = raised.value.__cause__
    assert isinstance(closing.__context__, RuntimeError if writer == "torch.save" else OSError)
    shown = "".join(traceback.format_exception(raised.value))
    assert "unexpected pos" not in shown and "inline_container" not in shown
    assert shown.count("OSError: [Errno 28]") == 2  # the close's error, then the one naming path
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_folder_that_takes_no_new_file_is_named_not_the_temporary_file(
    tmp_path, monkeypatch, code
):
    def refused(dir, prefix):
        raise OSError(code, os.strerror(code), os.path.join(dir, f"{prefix}fdmok2f2"))

    monkeypatch.setattr(tempfile, "mkstemp", refused)
    path = tmp_path / "iter_80.pth"
    with pytest.raises(OSError) as raised, atomic_write(path, binary=True):
        pytest.fail("the block ran without a file")
    assert raised.value.errno == code and raised.value.filename == str(path)
    assert f"cannot create a file in {tmp_path}" in str(raised.value)
    assert "fdmok2f2" not in str(raised.value)
