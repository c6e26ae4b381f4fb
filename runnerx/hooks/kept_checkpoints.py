"""The periodic checkpoints that ``CheckpointHook(max_keep_ckpts=k)`` keeps, oldest first, and
their MessageHub records: MMEngine's ``keep_ckpt_ids`` (the epochs or iterations saved) and
runnerx's ``keep_ckpt_files`` (``(step, path)`` pairs: the files as they were written).

A resumed run removes the files its checkpoint recorded, even when the file names changed since
(``by_epoch`` flipped, another ``filename_tmpl``). Records that hold steps only (MMEngine's, an
older runnerx's) are named with the current file-name pattern. As with the best checkpoints,
a recorded path outside the hook's folder means the file of that name in the folder (a copied
work dir); where there is none (``out_dir`` moved on resume, or a run resumed into another work
dir), the file is left alone and logged once, and does not count against ``max_keep_ckpts``.

Each checkpoint is vetted as it is saved (:func:`vet_checkpoint`): while every training loss
recorded so far and the weights are finite, it becomes the newest finite one; the first one saved
after that stops makes the newest finite one ``last_finite_ckpt``, which max_keep_ckpts does not
remove. So while the losses stay finite, no more than ``max_keep_ckpts`` periodic checkpoints
are kept.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from itertools import chain
from typing import Any

from runnerx.checkpoint.diverged_weights import all_finite
from runnerx.hooks.best_checkpoints import in_out_dir

#: MessageHub info (MMEngine's): the steps of the kept checkpoints, oldest first
IDS_KEY = "keep_ckpt_ids"
#: MessageHub info (runnerx's): the kept checkpoints as ``(step, path)``, oldest first
FILES_KEY = "keep_ckpt_files"
#: MessageHub info: the last checkpoint saved while the losses were finite, set once training
#: has diverged; LoggerHook names it, max_keep_ckpts does not remove it
LAST_FINITE_CKPT = "last_finite_ckpt"
#: MessageHub info: the newest checkpoint saved while the losses and its weights were finite
#: (the one LAST_FINITE_CKPT becomes if training diverges)
FINITE_CANDIDATE = "finite_ckpt_candidate"


class KeptCheckpoints:
    """The newest ``max_keep`` periodic checkpoints (``max_keep_ckpts``); the ones beyond go once
    a newer one is complete (CheckpointHook leaves ``last_finite_ckpt`` alone)."""

    def __init__(self, max_keep: int) -> None:
        self.max_keep = max_keep
        self._kept: list[tuple[int, str]] = []

    def resume(self, runner: Any, folder: str, name_of: Callable[[int], str]) -> list[str]:
        """Take over the kept checkpoints the MessageHub recorded (a resumed run's), for the
        hook's ``folder``; ``name_of(step)`` names a step's file when only steps were recorded.
        The paths now beyond ``max_keep``, oldest first (to remove)."""
        hub = runner.message_hub
        ids = list(hub.get_info(IDS_KEY) or [])
        files = [(step, path) for step, path in hub.get_info(FILES_KEY) or []]
        if [step for step, _ in files] != ids:  # steps only, or saved over by MMEngine since
            files = [(step, os.path.join(folder, name_of(step))) for step in ids]
        self._kept, elsewhere = [], []
        for step, path in files:
            local = in_out_dir(path, folder)
            if local:
                self._kept.append((step, local))
            elif os.path.exists(path):
                elsewhere.append(path)
        if elsewhere:
            runner.logger.warning(
                f"CheckpointHook: the periodic checkpoints the resumed run kept lie outside "
                f"{folder} ({', '.join(elsewhere)}): max_keep_ckpts leaves them alone"
            )
        return self.trim(hub)

    def add(self, hub: Any, step: int, path: str) -> list[str]:
        """Count the checkpoint ``path`` of ``step`` (once, when written again); the paths now
        beyond ``max_keep``, oldest first."""
        if not self._kept or self._kept[-1][1] != path:
            self._kept.append((step, path))
        return self.trim(hub)

    def trim(self, hub: Any) -> list[str]:
        """Cut the kept ones to ``max_keep`` and record them; the paths cut, oldest first."""
        excess = max(len(self._kept) - self.max_keep, 0)
        cut, self._kept = self._kept[:excess], self._kept[excess:]
        hub.update_info(IDS_KEY, [step for step, _ in self._kept])
        hub.update_info(FILES_KEY, list(self._kept))
        return [path for _, path in cut]


def vet_checkpoint(hub: Any, model: Any, path: str) -> None:
    """Record ``path``, a checkpoint being saved, as FINITE_CANDIDATE while training has not
    diverged: every training loss recorded so far (the newest iteration's included) and the
    weights are finite. Otherwise the candidate, saved before that, becomes LAST_FINITE_CKPT."""
    if hub.get_info(LAST_FINITE_CKPT) is None and _losses_finite(hub) and _weights_finite(model):
        hub.update_info(FINITE_CANDIDATE, path)
        return
    candidate = hub.pop_info(FINITE_CANDIDATE)
    if candidate:
        hub.update_info(LAST_FINITE_CKPT, candidate)


def _losses_finite(hub: Any) -> bool:
    # a buffer's running mean covers every value it was ever given, a resumed run's too: a
    # single NaN or inf among them leaves it non-finite for good
    return all(
        math.isfinite(buffer.mean())
        for key, buffer in hub.log_scalars.items()
        if key.startswith("train/") and "loss" in key and buffer.count
    )


def _weights_finite(model: Any) -> bool:
    # a finite loss can still give an inf gradient (sqrt or log at 0): the weights saved show it
    if model is None or not hasattr(model, "parameters"):
        return True
    return all_finite(chain(model.parameters(), model.buffers()))
