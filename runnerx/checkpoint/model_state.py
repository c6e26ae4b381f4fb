"""MMEngine's checkpoint functions (``mmengine.runner.checkpoint``), for code that calls them.

``from mmengine.runner import load_checkpoint`` becomes ``from runnerx.runner import
load_checkpoint``: the same ``load_checkpoint(model, filename, ...)`` that loads weights into
a model. (``runnerx.checkpoint.load_checkpoint(path)`` is runnerx's own: it only reads a file,
like MMEngine's ``_load_checkpoint``.)::

    from runnerx.runner import load_checkpoint, save_checkpoint, weights_to_cpu, get_state_dict

    checkpoint = load_checkpoint(model, 'work_dirs/x/epoch_12.pth', map_location='cpu')
    save_checkpoint({'state_dict': weights_to_cpu(get_state_dict(model))}, 'weights.pth')
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import torch
from torch import nn

from runnerx.fileio.paths import backend_args_of, local_path
from runnerx.logging import print_log
from runnerx.utils.errors import ValueAssertionError

from .io import load_model_weights
from .io import save_checkpoint as save_atomically
from .loader import CheckpointLoader


def weights_to_cpu(state_dict: Mapping) -> OrderedDict:
    """A copy of ``state_dict`` with every tensor on the CPU (its ``_metadata`` kept)."""
    copied = OrderedDict(
        (key, value.cpu() if isinstance(value, torch.Tensor) else value)
        for key, value in state_dict.items()
    )
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is not None:
        copied._metadata = metadata  # type: ignore[attr-defined]
    return copied


def get_state_dict(
    module: nn.Module, destination: dict | None = None, prefix: str = "", keep_vars: bool = False
) -> dict:
    """The state dict of the model inside ``module``'s wrappers (DDP, compile, ...), so that
    its keys have no ``module.`` in front, nor do the keys of submodules that are wrapped
    themselves (``MMSeparateDistributedDataParallel`` wraps each one, as MMEngine's
    ``get_state_dict`` sees); added to ``destination`` when one is given."""
    from runnerx.parallel.unwrap import is_model_wrapper, unwrap

    model = unwrap(module)
    state = model.state_dict(prefix=prefix, keep_vars=keep_vars)
    wrapped = [
        prefix + name
        for name, child in model.named_modules()
        if child is not model and is_model_wrapper(child)
    ]
    # the deepest first: a wrapper inside a wrapper leaves before the one around it
    for path in sorted(wrapped, key=lambda path: path.count("."), reverse=True):
        state = _without_wrapper(state, path)
    if destination is None:
        return state
    destination.update(state)
    return destination


def _without_wrapper(state: OrderedDict, path: str) -> OrderedDict:
    """``state`` with the keys under ``<path>.module`` moved to ``<path>``: the wrapper at
    ``path`` taken out (its version ``_metadata`` too; the wrapped module's moves up)."""
    inner = f"{path}.module"

    def moved(key: str) -> str:
        return path + key[len(inner) :] if key == inner or key.startswith(f"{inner}.") else key

    renamed = OrderedDict((moved(key), value) for key, value in state.items())
    metadata = getattr(state, "_metadata", None)
    if metadata is not None:
        renamed._metadata = OrderedDict(  # type: ignore[attr-defined]
            (moved(key), value) for key, value in metadata.items() if key != path
        )
    return renamed


def load_state_dict(
    module: nn.Module, state_dict: Mapping, strict: bool = False, logger: Any = None
) -> None:
    """Load ``state_dict`` into the model inside ``module``'s wrappers. Keys that do not
    match, and tensors of another shape, are an error with ``strict``; otherwise they are
    skipped and reported as a warning through ``logger`` (the run's log by default)."""
    _load_and_report(module, state_dict, strict, logger, ())


def _load_and_report(
    module: nn.Module, state_dict: Mapping, strict: bool, logger: Any, revise_keys: Iterable
) -> None:
    missing, unexpected = load_model_weights(
        module, {"state_dict": state_dict}, strict, revise_keys
    )
    problems = []
    if unexpected:
        problems.append(f"unexpected key in source state_dict: {', '.join(unexpected)}")
    if missing:
        problems.append(f"missing keys in source state_dict: {', '.join(missing)}")
    if problems:
        print_log("\n".join(problems), logger=logger, level=logging.WARNING)


def load_checkpoint(
    model: nn.Module,
    filename: str | os.PathLike,
    map_location: Any = None,
    strict: bool = False,
    logger: Any = None,
    revise_keys: Iterable[tuple[str, str]] = ((r"^module\.", ""),),
) -> dict:
    """Read ``filename`` (a path or an http(s) URL, see :class:`CheckpointLoader`), load its
    ``state_dict`` (or the whole file, if it is a bare state dict) into ``model`` after the
    ``revise_keys`` regex substitutions, and return the checkpoint."""
    checkpoint = CheckpointLoader.load_checkpoint(filename, map_location, logger)
    if not isinstance(checkpoint, Mapping):
        raise RuntimeError(
            f"{os.fspath(filename)} holds no state_dict (it holds a "
            f"{type(checkpoint).__name__}, not a dict)"
        )
    return load_checkpoint_to_model(model, checkpoint, strict, logger, revise_keys)


def load_checkpoint_to_model(
    model: nn.Module,
    checkpoint: Mapping,
    strict: bool = False,
    logger: Any = None,
    revise_keys: Iterable[tuple[str, str]] = ((r"^module\.", ""),),
) -> Mapping:
    """Load a checkpoint already read (its ``state_dict``, or the whole dict if it is a bare
    state dict) into ``model`` after the ``revise_keys`` substitutions, reporting keys that do
    not match as a warning (an error with ``strict``); returns ``checkpoint``. MMEngine's
    ``_load_checkpoint_to_model``, which mmdet's inferencer imports."""
    _load_and_report(model, checkpoint.get("state_dict", checkpoint), strict, logger, revise_keys)
    return checkpoint


def checkpoint_weights(filename: str | os.PathLike, map_location: Any = None) -> dict:
    """The weights a checkpoint holds: its ``state_dict`` (or the whole file, if it is a bare
    state dict), with a leading ``module.`` (from DDP) dropped from the names."""
    checkpoint = CheckpointLoader.load_checkpoint(filename, map_location)
    state = checkpoint.get("state_dict", checkpoint) if isinstance(checkpoint, Mapping) else {}
    return {key.removeprefix("module."): value for key, value in state.items()}


def load_checkpoint_with_prefix(
    prefix: str, filename: str | os.PathLike, map_location: Any = None
) -> dict:
    """The weights of one sub-module of a checkpoint (MMEngine's
    ``_load_checkpoint_with_prefix``): the entries of :func:`checkpoint_weights` under
    ``prefix`` (``'backbone'`` or ``'backbone.'``), with the prefix removed::

        backbone_weights = load_checkpoint_with_prefix('backbone', 'work_dirs/x/epoch_12.pth')
        model.backbone.load_state_dict(backbone_weights)

    No entry under ``prefix`` is an error (a ValueError, and MMEngine's AssertionError)."""
    prefix = prefix if prefix.endswith(".") else f"{prefix}."
    found = {
        key[len(prefix) :]: value
        for key, value in checkpoint_weights(filename, map_location).items()
        if key.startswith(prefix)
    }
    if not found:
        raise ValueAssertionError(
            f"no weight in {os.fspath(filename)} has a name that starts with {prefix!r}"
        )
    return found


def save_checkpoint(
    checkpoint: dict,
    filename: str | os.PathLike,
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
) -> None:
    """Write ``checkpoint`` to the local path ``filename`` atomically (the old file or the
    new one, never half of one). MMEngine's storage arguments may name the local disk
    (``backend_args=dict(backend='local')``, ``file_client_args=dict(backend='disk')``,
    the latter deprecated as in MMEngine); other backends and ``s3://``-like paths are
    refused with an error that names them."""
    backend_args = backend_args_of(file_client_args, backend_args)
    save_atomically(checkpoint, local_path(filename, backend_args, "save_checkpoint"))
