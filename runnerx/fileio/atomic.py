"""Writing files so that a crash cannot tear them (config dumps, checkpoints, ``dump``/``put``).

A file is written to a hidden temporary file beside its target, flushed, fsynced, then
renamed over the target: readers, and a crash at any moment, see the old file or the complete
new one. The fsync and rename may run on a background thread (``background=True``) so training
does not wait for the disk; what must happen after such a file is in place (pointing
``last_checkpoint`` at it, removing older checkpoints) is queued behind it with
:func:`after_pending_writes`, and :func:`wait_for_pending_writes` blocks until all is done.

Once a queued write or action fails, no action queued after it runs (a checkpoint that is not
in place must not be named in ``last_checkpoint``, nor its older ones removed);
:func:`failed_write` tells the next save about it, so that training stops there.

Work queued within ``with queued_by(runner):`` (CheckpointHook's saves) is that Runner's: its
failure stops only that Runner's actions and saves, and a wait made for another Runner
(``wait_for_pending_writes(owner=other)``, as a Runner does before it loads a checkpoint)
logs it as a WARNING instead of raising it. A failure of work queued outside such a block
concerns every Runner, as does a wait for no particular one (``owner=None``).
"""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import os
import tempfile
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, Any, NoReturn

#: Who queued a piece of work: a weak reference to its Runner (or a callable holding one that
#: takes no weak reference), None for work queued outside ``queued_by``
Owner = Callable[[], Any] | None

_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_pending: list[tuple[Future, Owner, str | None]] = []  # (the work, its owner, its file)
# (owner, the file or None for an action, its error): the failures since the last wait
_failures: list[tuple[Owner, str | None, BaseException]] = []
# the ids of other Runners' failures a wait has logged (kept until their own wait raises them)
_warned: set[int] = set()
_owner: contextvars.ContextVar[Owner] = contextvars.ContextVar("runnerx_writes_owner", default=None)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike,
    binary: bool = False,
    background: bool = False,
    encoding: str = "utf-8",
) -> Iterator[IO]:
    """Open a temporary file beside ``path`` (a text file in ``encoding`` unless ``binary``);
    when the block ends without error, put it in place atomically (with ``background=True``,
    its fsync and rename happen on the writer thread, in order with the other queued work).

    .. code-block:: python

        with atomic_write('work_dirs/x/config.py') as file:
            file.write(text)
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.")
    except OSError as error:  # it names a temporary file that was never created
        _raise_naming_the_file(error, path, f"cannot create a file in {folder}")
    try:
        mode, options = ("wb", {}) if binary else ("w", {"encoding": encoding})
        with os.fdopen(handle, mode, **options) as file:
            yield file
            file.flush()
    except BaseException as error:
        _discard(temporary)
        _raise_naming_the_file(_underlying(error), path)
    if background:
        _submit(lambda: _put_in_place(temporary, path), path)
        return
    try:
        _put_in_place(temporary, path)
    except OSError as error:
        _raise_naming_the_file(error, path)


def _underlying(error: BaseException) -> BaseException:
    """What to report for ``error`` from the block of :func:`atomic_write`: a KeyboardInterrupt
    in its chain (Ctrl-C is what happened, whatever failed while it unwound), or the OSError
    (a full disk) under the RuntimeError that torch's zip writer raises when it closes an
    archive whose write failed (``unexpected pos 53120 vs 53072``); else ``error`` itself,
    without such a RuntimeError, or the same OSError, as its context (closing the file
    flushed into the full disk again)."""
    seen = set()
    link: BaseException | None = error
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt):
            return _alone(link, error)
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    inner = error.__context__
    if (
        isinstance(error, RuntimeError)
        and isinstance(inner, OSError)
        and inner.errno is not None
        and _raised_in_torch(error)
    ):
        return _alone(inner, error)
    if isinstance(error, OSError) and error.errno is not None:
        torch_noise = isinstance(inner, RuntimeError) and _raised_in_torch(inner)
        if torch_noise or (isinstance(inner, OSError) and inner.errno == error.errno):
            error.__suppress_context__ = True
    return error


def _alone(inner: BaseException, outer: BaseException) -> BaseException:
    # Raised again while ``outer`` is handled, ``inner`` gets it as context: hide that noise.
    if inner is not outer:
        inner.__suppress_context__ = True
    return inner


def _raised_in_torch(error: BaseException) -> bool:
    frame = error.__traceback__
    while frame is not None and frame.tb_next is not None:
        frame = frame.tb_next
    return frame is not None and frame.tb_frame.f_globals.get("__name__", "").startswith("torch")


def _raise_naming_the_file(error: BaseException, path: str | None, doing: str = "") -> NoReturn:
    """Raise a disk's error while writing ``path`` (``[Errno 28] No space left on device``,
    which names no file, or one naming the temporary file) as the same kind of OSError naming
    ``path`` (saying what failed, ``doing``, when given); any other error (or one for no
    ``path``: an action) as it is."""
    if path is None or not isinstance(error, OSError) or error.errno is None:
        raise error
    named = error.filename is not None and not os.path.basename(str(error.filename)).startswith(
        f".{os.path.basename(path)}."
    )
    if named:
        raise error
    strerror = f"{error.strerror} ({doing})" if doing else error.strerror
    raise OSError(error.errno, strerror, path) from error


@contextlib.contextmanager
def queued_by(owner: object) -> Iterator[None]:
    """The background writes and actions queued in the block are ``owner``'s (a Runner): their
    failure stops ``owner``'s later actions and saves, not another Runner's.

    .. code-block:: python

        with queued_by(runner):
            runner.save_checkpoint(out_dir, 'epoch_1.pth', background=True)
            after_pending_writes(lambda: point_last_checkpoint(work_dir, path))
    """
    token = _owner.set(_reference(owner))
    try:
        yield
    finally:
        _owner.reset(token)


def _reference(owner: object) -> Owner:
    try:
        return weakref.ref(owner)
    except TypeError:  # an object that takes no weak reference is held
        return _Held(owner)


class _Held:
    """A strong reference with a weak reference's calls: ``held()`` and ``==`` by referent."""

    def __init__(self, owner: object) -> None:
        self.owner = owner

    def __call__(self) -> object:
        return self.owner

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Held) and other.owner is self.owner

    __hash__ = object.__hash__


def _concerns(who: Owner, owner: Owner) -> bool:
    """Whether a failure of work queued by ``who`` concerns ``owner``: its own failures, and
    those of work queued outside ``queued_by`` (None), concern it."""
    return who is None or who == owner


def after_pending_writes(function: Callable[[], object], independent: bool = False) -> None:
    """Run ``function`` once the files queued for the background are in place (now, if none);
    never, when one of them (or an action queued before) of the same owner (see
    :func:`queued_by`) failed (see :func:`failed_write`). ``independent=True``: a failure of
    ``function`` does not keep the later actions from running (an upload of a complete file);
    :func:`wait_for_pending_writes` still raises it."""
    owner = _owner.get()
    with _lock:
        busy = any(not future.done() for future, _, _ in _pending)
        failed = any(_concerns(who, owner) for who, _, _ in _failures)
    if busy:
        _submit(function, independent=independent)
    elif not failed:
        function()


def failed_write(owner: object = None) -> tuple[str | None, BaseException] | None:
    """The first background write that failed since the last :func:`wait_for_pending_writes`,
    as ``(path, error)`` (``path`` None when an action queued behind a write failed), or None;
    with ``owner``, the first that concerns it (see :func:`queued_by`). Nothing of its owner
    queued after it has run. Cheap: it waits for nothing."""
    reference = None if owner is None else _reference(owner)
    for who, path, error in list(_failures):
        if owner is None or _concerns(who, reference):
            return path, error
    return None


def wait_for_pending_writes(raise_errors: bool = True, owner: object = None) -> None:
    """Block until every queued write and action is done; raise the first error among them
    and forget them all (``raise_errors=False``: only wait, leaving them to
    :func:`failed_write`). With ``owner`` (a Runner), raise and forget only the errors that
    concern it (see :func:`queued_by`); another living Runner's failures are logged once as
    WARNINGs, naming their files, and kept for that Runner's own wait to raise."""
    with _lock:
        pending = list(_pending)
    errors = [(future.exception(), who, path) for future, who, path in pending]
    if not raise_errors:
        return
    reference = None if owner is None else _reference(owner)

    def kept(who: Owner) -> bool:  # another Runner's, which is still there to raise it
        return not (owner is None or _concerns(who, reference)) and who() is not None

    kept_errors = {id(error) for error, who, _ in errors if error is not None and kept(who)}
    with _lock:
        _pending[:] = [
            entry
            for entry in _pending
            if entry not in pending or id(entry[0].exception()) in kept_errors
        ]
        _failures[:] = [failure for failure in _failures if kept(failure[0])]
    ours = []
    for error, who, path in errors:
        if error is None:
            continue
        if owner is None or _concerns(who, reference):
            ours.append(error)
        elif id(error) not in _warned:  # another Runner's: kept for it, or its Runner is gone
            _warned.add(id(error))
            _warn_of_anothers_failure(error, path)
    _warned.intersection_update(kept_errors)
    if ours:
        raise ours[0]


def _warn_of_anothers_failure(error: BaseException, path: str | None) -> None:
    from runnerx.logging import print_log

    what = f"writing {path}" if path else "a step queued after writing a file"
    print_log(
        f"{what} failed for another Runner of this process (queued by it, so not raised "
        f"here): {type(error).__name__}: {error}",
        logger="current",
        level=logging.WARNING,
    )


def _put_in_place(temporary: str, path: str) -> None:
    try:
        descriptor = os.open(temporary, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        _discard(temporary)
        raise
    _sync_folder(os.path.dirname(os.path.abspath(path)))


def _sync_folder(folder: str) -> None:
    # The rename itself survives a power loss only once the folder's entry is on disk.
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def _discard(temporary: str) -> None:
    if os.path.exists(temporary):
        os.unlink(temporary)


def _submit(
    function: Callable[[], object], path: str | None = None, independent: bool = False
) -> None:
    """Queue ``function`` on the writer thread: the write of ``path``, or (None) an action."""
    global _executor
    owner = _owner.get()
    with _lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="runnerx-writer")
            atexit.register(_finish_at_exit)
        _pending[:] = [entry for entry in _pending if not entry[0].done() or entry[0].exception()]
        future = _executor.submit(_run_in_order, function, path, independent, owner)
        _pending.append((future, owner, path))


def _run_in_order(
    function: Callable[[], object], path: str | None, independent: bool, owner: Owner
) -> None:
    # A write still runs after a failure (it leaves the complete file or none); an action,
    # which relies on what its owner queued before it, does not.
    if path is None and any(_concerns(who, owner) for who, _, _ in list(_failures)):
        return
    try:
        function()
    except BaseException as error:
        with _lock:
            if not independent:
                _failures.append((owner, path, error))
        _raise_naming_the_file(error, path)


def _finish_at_exit() -> None:
    try:
        wait_for_pending_writes()
    except Exception as error:  # the process is ending: say what was not written
        warnings.warn(f"a background file write failed: {error}", stacklevel=1)
