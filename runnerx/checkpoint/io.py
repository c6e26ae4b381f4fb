"""Writing checkpoints so a crash cannot tear them, and reading them safely.

A checkpoint is written to a hidden temporary file in the same folder, flushed and fsynced,
then renamed over the target (:func:`runnerx.fileio.atomic_write`): readers, and a crash at any
moment, see the old file or the complete new one. A crash can leave the temporary file behind;
:func:`remove_partial_files` deletes such leftovers (``CheckpointHook`` does at the start of
training). Reading uses ``torch.load(weights_only=True)``, which runs no pickled code (see
:mod:`runnerx.checkpoint.safe_load`); ``unsafe_load=True`` is the opt-in for trusted files.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import zipfile
from collections.abc import Callable, Iterable
from typing import Any

import torch

from runnerx.fileio import atomic_write
from runnerx.logging import print_log

from .safe_load import load_weights_only

#: The temporary file of an interrupted ``atomic_write``: a dot, the target's file name, a dot
#: and the 8 random characters ``tempfile.mkstemp`` adds.
_PARTIAL_FILE = re.compile(r"^\.(?P<target>.+)\.[a-z0-9_]{8}$")


def save_checkpoint(checkpoint: dict, path: str | os.PathLike, background: bool = False) -> None:
    """Write ``checkpoint`` to ``path`` atomically (the old file or the new one, never half).

    The dict is serialised before this returns (training may change the tensors right after);
    with ``background=True`` only the fsync and rename are left to the writer thread (see
    :mod:`runnerx.fileio`), so a save costs about what ``torch.save`` costs.
    """
    with atomic_write(path, binary=True, background=background) as file:
        torch.save(checkpoint, file)


def load_checkpoint(
    path: str | os.PathLike, map_location: Any = "cpu", *, unsafe_load: bool = False
) -> dict:
    """Read a checkpoint without running any pickled code (``weights_only=True``).

    Objects other than tensors, plain containers, numpy values, runnerx's ``ConfigDict`` and
    what MMEngine checkpoints hold raise :class:`UnsafeCheckpointError` naming them.
    ``unsafe_load=True`` unpickles everything (which can run code): only for files you trust.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        where = "" if os.path.isabs(path) else f", read from {os.getcwd()}"
        if not os.path.isdir(path):
            raise FileNotFoundError(f"checkpoint not found: {path} (no such file{where})")
        from runnerx.parallel.sharded_checkpoint import folder_hint

        raise FileNotFoundError(
            f"checkpoint not found: {path} (a folder, not a checkpoint file{where})"
            f"{folder_hint(path)}"
        )
    return read_checkpoint(path, path, map_location, unsafe_load)


class DamagedCheckpointError(RuntimeError):
    """A checkpoint file cut short or whose bytes changed after ``torch.save`` wrote them; a
    RuntimeError as torch's own reader raises, so that callers catching that keep working."""


#: How files that ``torch.save`` wrote begin: a zip archive (torch 1.6 and later), or the
#: pickled magic number of its older format (MMEngine-era checkpoints may have it).
_TORCH_SAVE_HEADS = (b"PK\x03\x04", b"PK\x05\x06", b"\x80\x02\x8a\nl\xfc\x9cF\xf9 j\xa8P\x19")


def read_checkpoint(source: Any, name: str, map_location: Any, unsafe_load: bool) -> Any:
    """``torch.load`` of ``source`` (a path or a seekable file object), safely unless
    ``unsafe_load``. A file that ``torch.save`` did not write (a text file, a log, a bare
    pickle) is a ValueError naming ``name``; one cut short is a RuntimeError naming it; a
    read that fails (an I/O error of the disk) is the same OSError naming it."""
    head = _head(source)
    if head is not None and not head.startswith(_TORCH_SAVE_HEADS):
        what = f"it starts with {head[:16]!r}" if head else "it is empty"
        raise ValueError(
            f"{name} is not a checkpoint: torch.save writes a zip archive (or, before torch "
            f"1.6, a file that starts with torch's magic number), but {what}"
        )
    try:
        if unsafe_load:
            return torch.load(source, map_location=map_location, weights_only=False)
        return load_weights_only(source, map_location)
    except RuntimeError as error:
        if "PytorchStreamReader" not in str(error):
            raise
        raise _incomplete(name, error) from error
    except OSError as error:
        if error.filename is not None or error.errno is None:  # names its file, or no errno
            raise
        # torch's zip reader raises a bare EINVAL when a torn archive's directory points
        # past the file's end; any other errno is a real I/O error, raised naming the file
        if error.errno == errno.EINVAL:
            raise _incomplete(name, error) from error
        raise OSError(error.errno, error.strerror, name) from error


def verify_checkpoint(path: str, instead: str) -> None:
    """Refuse a checkpoint file whose bytes changed after ``torch.save`` wrote them (a disk or
    a copy that flipped bits): torch stores a CRC-32 of each entry of its zip archive but does
    not check them when it loads. Reads the whole file once (about 0.6 s per GB); a resume and
    ``load_from`` (so ``tools/test.py``) call it, where silently corrupted weights would spoil
    a run or a score. ``instead`` is the cure the error suggests."""
    if not zipfile.is_zipfile(path):
        return  # the pre-1.6 format has no checksums; read_checkpoint judges the rest
    try:
        with zipfile.ZipFile(path) as archive:
            corrupted = archive.testzip()
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise _incomplete(path, error) from error
    if corrupted is not None:
        raise DamagedCheckpointError(
            f"{path} is corrupted: its entry {corrupted} does not match the CRC-32 torch.save "
            f"wrote (a disk or copy error changed it); {instead}"
        )


def _incomplete(name: str, error: BaseException) -> DamagedCheckpointError:
    return DamagedCheckpointError(
        f"{name} is not a complete checkpoint (truncated or not written by torch.save): {error}"
    )


def _head(source: Any) -> bytes | None:
    """The first bytes of ``source`` (None for a file object that cannot seek back)."""
    size = len(_TORCH_SAVE_HEADS[-1])
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as file:
            return file.read(size)
    if not (hasattr(source, "seekable") and source.seekable()):
        return None
    start = source.tell()
    head = source.read(size)
    source.seek(start)
    return head


def load_model_weights(
    model: torch.nn.Module,
    checkpoint: dict,
    strict: bool = False,
    revise_keys: Iterable[tuple[str, str]] = ((r"^module\.", ""),),
    *,
    refuse_other_shapes: str | None = None,
) -> tuple[list[str], list[str]]:
    """Load the weights of ``checkpoint`` (its ``state_dict``, or itself) into ``model``.

    ``revise_keys`` rewrites checkpoint keys with ``re.sub(pattern, replacement, key)`` first
    (the default drops the ``module.`` a DDP-wrapped model's keys start with). Returns the
    (missing, unexpected) keys; with ``strict`` any of them, or a tensor whose shape differs
    from the model's, is an error. Without ``strict``, as in MMEngine, a tensor of another
    shape is skipped (fine-tuning a model whose head has other classes) and named in a
    warning in the run's log; it is not counted as missing. ``refuse_other_shapes`` (why
    they must fit, e.g. the weights are to be evaluated) makes such tensors an error.
    """
    state = checkpoint.get("state_dict", checkpoint)
    for pattern, replacement in revise_keys:
        state = {re.sub(pattern, replacement, key): value for key, value in state.items()}
    mismatched: set[str] = set()
    if not strict:
        state, mismatched = _without_shape_mismatches(model, state, refuse_other_shapes)
    from runnerx.parallel import load_model_state_dict  # any wrapper, FSDP shards included

    missing, unexpected = load_model_state_dict(model, state, strict=strict)
    return [key for key in missing if key not in mismatched], list(unexpected)


def remove_partial_files(folder: str | os.PathLike, is_target: Callable[[str], bool]) -> list[str]:
    """Delete the temporary files that interrupted atomic writes left in ``folder``, for the
    target file names ``is_target`` accepts; return their paths.

    Call it only when nothing is writing to ``folder`` (e.g. before training starts).
    """
    folder = os.fspath(folder)
    if not os.path.isdir(folder):
        return []
    removed = []
    for name in sorted(os.listdir(folder)):
        match = _PARTIAL_FILE.match(name)
        path = os.path.join(folder, name)
        if match and is_target(match["target"]) and os.path.isfile(path):
            os.remove(path)
            removed.append(path)
    return removed


def _without_shape_mismatches(
    model: torch.nn.Module, state: dict, refuse: str | None = None
) -> tuple[dict, set[str]]:
    """``state`` without the tensors whose shape differs from the model's, and their names
    (logged as a warning; a ValueError led by ``refuse``, why they must fit, when given)."""
    from runnerx.parallel import unwrap

    expected = unwrap(model).state_dict()
    mismatched = {
        key
        for key, value in state.items()
        if key in expected
        and isinstance(value, torch.Tensor)
        and value.shape != expected[key].shape
    }
    if not mismatched:
        return state, mismatched
    details = "; ".join(
        f"{key}: checkpoint {tuple(state[key].shape)}, model {tuple(expected[key].shape)}"
        for key in sorted(mismatched)
    )
    if refuse is not None:
        raise ValueError(
            f"{refuse}: {len(mismatched)} of the model's {len(expected)} weight tensors have "
            f"another shape there ({details})"
        )
    print_log(
        f"{len(mismatched)} checkpoint tensor(s) whose shape differs from the model's were not "
        f"loaded: {details}",
        logger="current",
        level=logging.WARNING,
    )
    return {key: value for key, value in state.items() if key not in mismatched}, mismatched
