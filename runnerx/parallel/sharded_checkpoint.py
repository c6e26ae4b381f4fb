"""Sharded checkpoints: every rank writes its own shards (``torch.distributed.checkpoint``).

For models too large to gather on one rank. A sharded checkpoint is a folder: the model
(``state_dict``) and optimizer (``optimizer``) state in DCP's files, written by all ranks in
parallel, plus ``extra.pth`` (written by rank 0) with everything else the checkpoint holds
(``meta``, ``message_hub``, ``param_schedulers``, ...). It loads back into the same model
under any number of ranks; ``tools/consolidate_checkpoint.py`` turns it into one ordinary
checkpoint file::

    python tools/consolidate_checkpoint.py work_dirs/x/iter_1000 work_dirs/x/iter_1000.pth
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from runnerx.dist import barrier, get_rank, is_distributed

from .state_dict import (
    load_model_state_dict,
    load_optimizer_state_dict,
    model_state_dict,
    optimizer_state_dict,
)

EXTRA_FILE = "extra.pth"
_METADATA_FILE = ".metadata"  # what DCP writes last: its presence marks a finished save


def saves_sharded(model: nn.Module) -> bool:
    """Whether ``model``'s strategy asks for sharded checkpoints
    (``strategy=dict(type='FSDP', state_dict_type='sharded')``)."""
    return getattr(model, "state_dict_type", "full") == "sharded"


def save_sharded_checkpoint(
    path: str | os.PathLike,
    model: nn.Module,
    optim_wrapper: Any = None,
    extra: dict | None = None,
) -> None:
    """Save ``model`` (and ``optim_wrapper``) as shards to the folder ``path``, with ``extra``
    (any other checkpoint entries, on rank 0) in ``path/extra.pth``. All ranks call it.

    The shards go to ``path.partial`` first and the folder takes its name only once every rank
    has finished, so a crash never leaves a half-written folder under the final name.
    """
    import torch.distributed.checkpoint as dcp

    from runnerx.checkpoint.io import save_checkpoint

    path = os.fspath(path)
    partial = f"{path}.partial"
    state = {"state_dict": model_state_dict(model, full=False)}
    if optim_wrapper is not None:
        state["optimizer"] = optimizer_state_dict(model, optim_wrapper, full=False)
    if get_rank() == 0 and os.path.isdir(partial):
        shutil.rmtree(partial)  # left by an interrupted save
    barrier()
    with _single_process_is_intended():
        dcp.save(state, checkpoint_id=partial, no_dist=not is_distributed())
    if get_rank() == 0:
        save_checkpoint(dict(extra or {}), os.path.join(partial, EXTRA_FILE))
    barrier()
    if get_rank() == 0:
        _replace_folder(partial, path)
    barrier()


def load_sharded_checkpoint(
    path: str | os.PathLike, model: nn.Module, optim_wrapper: Any = None
) -> dict:
    """Load the folder ``path`` written by :func:`save_sharded_checkpoint` into ``model`` (and
    ``optim_wrapper``) in place; return the other entries (``extra.pth``). All ranks call it."""
    import torch.distributed.checkpoint as dcp

    from runnerx.checkpoint.io import load_checkpoint

    path = os.fspath(path)
    _require_sharded(path)
    state = {"state_dict": model_state_dict(model, full=False)}
    if optim_wrapper is not None:
        state["optimizer"] = optimizer_state_dict(model, optim_wrapper, full=False)
    with _single_process_is_intended():
        dcp.load(state, checkpoint_id=path, no_dist=not is_distributed())
    load_model_state_dict(model, state["state_dict"], strict=True)
    if optim_wrapper is not None:
        load_optimizer_state_dict(model, optim_wrapper, state["optimizer"])
    extra_path = os.path.join(path, EXTRA_FILE)
    return load_checkpoint(extra_path) if os.path.isfile(extra_path) else {}


def folder_hint(folder: str | os.PathLike) -> str:
    """For error messages about a folder given where one checkpoint file is expected: the
    command that makes one file of a sharded checkpoint, or which file of a work dir to give
    (``""`` for any other folder)."""
    folder = os.fspath(folder)
    if not os.path.isfile(os.path.join(folder, _METADATA_FILE)):
        return _hint(folder)
    out_file = f"{os.path.splitext(folder.rstrip(os.sep))[0]}_consolidated.pth"
    return (
        "; it is a sharded checkpoint (the shards of every rank, as strategy=dict(type='FSDP', "
        "state_dict_type='sharded') saves them): make one file of it first with python "
        f"tools/consolidate_checkpoint.py {folder} {out_file}"
    )


def _require_sharded(path: str) -> None:
    """Refuse ``path`` unless it is a finished sharded checkpoint, saying what it is instead."""
    if os.path.isfile(os.path.join(path, _METADATA_FILE)):
        return
    if not os.path.isdir(path):
        raise FileNotFoundError(f"{path} is not a sharded checkpoint (no such folder)")
    raise FileNotFoundError(
        f"{path} is not a sharded checkpoint (it has no {_METADATA_FILE}){_hint(path)}"
    )


def _hint(folder: str) -> str:
    """For a folder that holds checkpoints (a work dir) given as one: which file to give."""
    last = os.path.join(folder, "last_checkpoint")
    names = sorted(name for name in os.listdir(folder) if name.endswith(".pth"))
    if os.path.isfile(last):
        with open(last) as file:
            newest = file.read().strip()
    elif names:
        newest = os.path.join(folder, names[-1])
    else:
        return ""
    return (
        f"; it looks like a work dir: give one of its checkpoints, such as {newest}, or, to "
        "continue the run saved there, resume=True (tools/train.py --resume) with that work_dir"
    )


def consolidate_checkpoint(sharded_dir: str | os.PathLike, out_path: str | os.PathLike) -> dict:
    """Write the sharded checkpoint ``sharded_dir`` as one checkpoint file ``out_path`` (whole
    tensors; the optimizer state keyed by parameter name) and return it. One process, no
    GPU: it reads the shards of every rank."""
    try:
        from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    except ImportError as error:
        raise RuntimeError(
            f"consolidating needs torch.distributed.checkpoint.format_utils (torch >= 2.3); "
            f"this is torch {torch.__version__}"
        ) from error
    from runnerx.checkpoint.io import load_checkpoint, save_checkpoint

    sharded_dir, out_path = os.fspath(sharded_dir), os.fspath(out_path)
    if os.path.isfile(sharded_dir):
        raise ValueError(
            f"{sharded_dir} is already a single-file checkpoint: nothing to consolidate (it "
            "loads as it is)"
        )
    _require_sharded(sharded_dir)
    extra_path = os.path.join(sharded_dir, EXTRA_FILE)
    checkpoint = load_checkpoint(extra_path) if os.path.isfile(extra_path) else {}
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(out_path))) as scratch:
        tensors_path = os.path.join(scratch, "tensors.pth")
        dcp_to_torch_save(sharded_dir, tensors_path)
        checkpoint.update(load_checkpoint(tensors_path))
    save_checkpoint(checkpoint, out_path)
    return checkpoint


def _replace_folder(source: str, target: str) -> None:
    """Give ``source`` the name ``target``, replacing an older folder of that name."""
    if not os.path.exists(target):
        os.rename(source, target)
        return
    old = f"{target}.old"
    if os.path.isdir(old):
        shutil.rmtree(old)
    os.rename(target, old)
    os.rename(source, target)
    shutil.rmtree(old)


@contextmanager
def _single_process_is_intended() -> Iterator[None]:
    """Silence DCP's warning that it works in one process: without a process group, that is
    what runnerx asks of it."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torch.distributed is .*unavailable")
        yield
