"""What checkpoints a work dir holds when its ``last_checkpoint`` does not name one: the best
checkpoints ``CheckpointHook(save_best=...)`` kept (a run stopped before its first periodic
save leaves only those), or the newest checkpoint left when the named one was deleted. Used
by ``resume=True``, ``tools/train.py --resume last``, ``tools/test.py CONFIG best|last`` and
the report of a failed run, so that each names the checkpoint a user can still go on from.
"""

from __future__ import annotations

import os
import re


def best_checkpoints(folders: list[str]) -> list[str]:
    """The ``best_*`` checkpoints (files, or sharded checkpoints' folders) that
    ``CheckpointHook(save_best=...)`` left in ``folders``, each once: neither a sharded one
    still being written nor the published copy of another."""
    found: dict[str, str] = {}
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if name.startswith("best_") and not name.endswith(".partial"):
                path = os.path.join(folder, name)
                found.setdefault(os.path.realpath(path), path)
    best = list(found.values())
    # a published copy beside its checkpoint is the same weights: not another candidate
    copies = {path for path in best if unpublished_name(path) != path}
    return [path for path in best if path not in copies or unpublished_name(path) not in best]


def unpublished_name(path: str) -> str:
    """The checkpoint ``path`` is the published copy of (``published_keys`` writes
    ``<name>-<sha256[:8]>.pth`` beside ``<name>.pth``), else ``path`` itself."""
    return re.sub(r"-[0-9a-f]{8}(\.[^./]+)$", r"\1", path)


def newest_best_checkpoint(work_dir: str) -> str | None:
    """The best checkpoint of ``work_dir`` written last, if ``save_best`` left any."""
    best = best_checkpoints([work_dir])
    return max(best, key=os.path.getmtime) if best else None


def resume_from_best(path: str) -> str:
    """How to go on from the best checkpoint ``path``, and what such a resume lacks."""
    return (
        f"resume from it with --resume {path} (resume='{path}'): training goes on from its "
        "iteration and data position, but the optimizer and parameter schedulers start over "
        "(save_best saves without their state)"
    )


def missing_last_checkpoint(work_dir: str, named: str) -> str:
    """The error for a ``last_checkpoint`` that names a checkpoint which no longer exists: the
    newest checkpoint still in the work dir, and how to resume from it."""
    pointer = os.path.join(work_dir, "last_checkpoint")
    checkpoints = [
        entry
        for entry in os.scandir(work_dir)
        if not entry.name.startswith(".")
        and (
            (entry.is_file() and entry.name.endswith(".pth"))
            or (entry.is_dir() and os.path.isfile(os.path.join(entry.path, ".metadata")))
        )
    ]
    message = f"resume: {pointer} names {named}, which no longer exists; "
    if not checkpoints:
        return message + (
            f"{work_dir} holds no other checkpoint: give one with resume='<checkpoint>' "
            "(tools/train.py --resume <checkpoint>), or train from the start with resume=False"
        )
    newest = max(checkpoints, key=lambda entry: entry.stat().st_mtime).path
    return message + (
        f"the newest checkpoint in {work_dir} is {os.path.basename(newest)}: resume from it "
        f"with resume='{newest}' (tools/train.py --resume {newest})"
    )
