"""One training run per work dir at a time.

``Runner.train()`` holds an exclusive advisory lock (``flock``) on ``<work_dir>/.runnerx.lock``
on rank 0 while it trains, so that a second run started with the same work dir stops at once
instead of saving its checkpoints and ``last_checkpoint`` over the first run's:

.. code-block:: python

    with work_dir_lock(runner.work_dir, log_file, runner.logger):
        ...  # train

The kernel drops the lock when its process ends, however it ends (even ``kill -9``), so a
lock is never stale; the file itself stays, holding the last holder's pid, host, start time and
log file. Where locks cannot be taken (no ``fcntl`` on Windows, a network file system that
refuses ``flock``), training goes on unlocked.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Iterator

from runnerx.dist import from_rank_zero

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: the lock file's name in the work dir
LOCK_FILE = ".runnerx.lock"


class WorkDirInUseError(RuntimeError):
    """Another live process is training in this work dir (it holds the work dir's lock)."""


@contextlib.contextmanager
def work_dir_lock(work_dir: str, log_file: str, logger: logging.Logger) -> Iterator[None]:
    """Hold ``work_dir``'s lock for the body (on rank 0; every rank enters it together).

    Raises :class:`WorkDirInUseError` on rank 0 when another process holds it, naming that
    run; the other ranks then raise a RuntimeError that says so instead of waiting for rank 0.
    ``log_file`` is this run's log, written into the lock file for the next one to name.
    """
    lock = _Lock(os.path.join(work_dir, LOCK_FILE), log_file, logger)
    from_rank_zero(lock.take, "taking the work_dir lock")
    try:
        yield
    finally:
        lock.drop()


class _Lock:
    """The lock file of one work dir, taken at most once."""

    def __init__(self, path: str, log_file: str, logger: logging.Logger) -> None:
        self.path, self.log_file, self.logger = path, log_file, logger
        self.fd: int | None = None

    def take(self) -> None:
        if fcntl is None:
            self.logger.debug("no fcntl on this system: the work dir is not locked")
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            self._unlocked(error)
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd, self.path)
            os.close(fd)
            work_dir = os.path.dirname(self.path)
            raise WorkDirInUseError(
                f"work_dir {work_dir!r} is in use by another run ({holder}); give another "
                "--work-dir (or work_dir=...), or wait until that run ends"
            ) from None
        except OSError as error:
            os.close(fd)
            self._unlocked(error)
            return
        self.fd = fd
        holder = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": time.strftime("%Y-%m-%d %H:%M:%S"),
            "log": self.log_file,
        }
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(holder, indent=1) + "\n").encode())

    def drop(self) -> None:
        if self.fd is not None:
            # unlocked before closing: forked dataloader workers share this open file, and
            # closing our descriptor alone would leave the work dir locked while they live
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def _unlocked(self, error: OSError) -> None:
        self.logger.warning(
            f"cannot lock {self.path} ({error.strerror or error}; a network file system may "
            "refuse file locks): training goes on, but another run started in this work dir "
            "would not be stopped from saving checkpoints over this one's"
        )


def other_run_in(work_dir: str) -> str | None:
    """The run that holds ``work_dir``'s lock now (pid, host, start, log), or None when no
    process does, or locks cannot be taken there. It tries the lock for an instant: a run
    that starts training in that instant would see it taken."""
    if fcntl is None:
        return None
    path = os.path.join(work_dir, LOCK_FILE)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # no lock file: no run has trained there
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(fd, path)
    except OSError:
        return None
    finally:
        os.close(fd)  # which also drops an instant's lock
    return None


def _holder(fd: int, path: str) -> str:
    """Who holds the lock, as its lock file says (written just after it was taken)."""
    try:
        holder = json.loads(os.pread(fd, 4096, 0).decode())
        return (
            f"pid {holder['pid']} on {holder['host']}, started {holder['started']}, "
            f"log {holder['log']}"
        )
    except (OSError, ValueError, KeyError, TypeError):  # the holder has not written it yet
        return f"which one {path} does not say yet"
