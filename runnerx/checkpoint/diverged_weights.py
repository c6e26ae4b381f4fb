"""Weights that hold NaN or inf, found when a checkpoint is loaded or resumed: a run that had
diverged saved them, and nothing else would say so (a resume trains on from NaN, a test
scores chance). The warning names the last checkpoint saved while the losses were finite
when the checkpoint's history records one (LoggerHook's ``last_finite_ckpt``)."""

from __future__ import annotations

import os
from itertools import chain
from typing import Any

import torch

from .resume_checks import same_name_in


def warn_if_diverged(runner: Any, path: str, checkpoint: dict, resuming: bool) -> None:
    """Warn when the weights loaded from ``path`` hold NaN or inf (saved after training had
    diverged: a resume trains on from them, a test scores chance), naming the last checkpoint
    saved while the logged losses were finite when its history records one (LoggerHook's
    ``last_finite_ckpt``) and how to use it. One pass over the tensors, at load time only: the
    checkpoint's ``state_dict``, or for a sharded checkpoint each rank's loaded part."""
    if os.path.isdir(path):
        from runnerx.dist import all_gather_object

        model = runner.model
        local = not all_finite(chain(model.parameters(), model.buffers()))
        diverged = any(all_gather_object(local))
    else:
        diverged = not all_finite(checkpoint.get("state_dict", checkpoint).values())
    if not diverged:
        return
    message = (
        f"{'resume' if resuming else 'load_from'}: {path} holds NaN/inf weights: training had "
        "diverged when it was saved"
    )
    good = _last_finite_checkpoint(checkpoint, path)
    if good and not os.path.exists(good):
        message += f"; {good}, the last checkpoint saved while the losses were finite, is gone"
    elif good and resuming:
        message += (
            f"; resume from the last checkpoint saved while the losses were finite instead: "
            f"--resume {good} (resume='{good}')"
        )
    elif good:
        message += (
            f"; the last checkpoint saved while the losses were finite is {good}: test it with "
            f"tools/test.py CONFIG {good}, or resume training from it with --resume {good}"
        )
    runner.logger.warning(message)


def all_finite(tensors: Any) -> bool:
    """Whether the floating-point ``tensors`` (a DTensor: its local shard) hold no NaN or inf;
    one host-device transfer per device, not one per tensor."""
    flags: dict[torch.device, list[torch.Tensor]] = {}
    for tensor in tensors:
        tensor = tensor.to_local() if hasattr(tensor, "to_local") else tensor  # a DTensor shard
        if isinstance(tensor, torch.Tensor) and tensor.is_floating_point() and not tensor.is_meta:
            flags.setdefault(tensor.device, []).append(torch.isfinite(tensor.detach()).all())
    return all(bool(torch.stack(device_flags).all()) for device_flags in flags.values())


def _last_finite_checkpoint(checkpoint: dict, path: str) -> str | None:
    """The last checkpoint saved while the logged losses were finite, as the history in
    ``checkpoint`` records it: the file of that name beside ``path`` when there is one (the
    same file, or its copy in a copied work dir), else the recorded path; None when none is
    recorded, or only ``path`` itself."""
    from runnerx.hooks.checkpoint_hook import LAST_FINITE_CKPT

    hub = checkpoint.get("message_hub")
    info = hub.get("runtime_info", {}) if isinstance(hub, dict) else {}
    good = info.get(LAST_FINITE_CKPT) if isinstance(info, dict) else None
    if not isinstance(good, str) or not good:
        return None
    good = same_name_in(os.path.dirname(path), good) or good
    return None if os.path.realpath(good) == os.path.realpath(path) else good
