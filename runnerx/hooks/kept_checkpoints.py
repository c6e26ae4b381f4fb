"""The periodic checkpoints that ``CheckpointHook(max_keep_ckpts=k)`` keeps, oldest first, and
their MessageHub records: MMEngine's ``keep_ckpt_ids`` (the epochs or iterations saved) and
runnerx's ``keep_ckpt_files`` (``(step, path)`` pairs: the files as they were written).

A resumed run removes the files its checkpoint recorded, even when the file names changed since
(``by_epoch`` flipped, another ``filename_tmpl``). Records that hold steps only (MMEngine's, an
older runnerx's) are named with the current file-name pattern. As with the best checkpoints,
a recorded path outside the hook's folder means the file of that name in the folder (a copied
work dir); where there is none (``out_dir`` moved on resume, or a run resumed into another work
dir), the file is left alone and logged once, and does not count against ``max_keep_ckpts``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from runnerx.hooks.best_checkpoints import in_out_dir

#: MessageHub info (MMEngine's): the steps of the kept checkpoints, oldest first
IDS_KEY = "keep_ckpt_ids"
#: MessageHub info (runnerx's): the kept checkpoints as ``(step, path)``, oldest first
FILES_KEY = "keep_ckpt_files"
#: MessageHub info: the last checkpoint saved while the logged losses were finite, which
#: LoggerHook names when training diverges; max_keep_ckpts does not remove it
LAST_FINITE_CKPT = "last_finite_ckpt"
#: MessageHub info: the checkpoint LoggerHook would name as LAST_FINITE_CKPT if the next logged
#: losses were not finite; max_keep_ckpts keeps it until a newer one takes its place
FINITE_CANDIDATE = "finite_ckpt_candidate"


class KeptCheckpoints:
    """The newest ``max_keep`` periodic checkpoints (``max_keep_ckpts``); the ones beyond go once
    a newer one is complete, except LoggerHook's candidate for the last finite checkpoint, which
    stays beyond the count until a newer one takes its place (its logged losses are not known
    yet)."""

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
        excess = len(self._kept) - self.max_keep
        cut = self._kept[:excess] if excess > 0 else []
        candidate = os.path.basename(hub.get_info(FINITE_CANDIDATE) or "")
        held = [entry for entry in cut if os.path.basename(entry[1]) == candidate]
        self._kept = held + self._kept[max(excess, 0) :]
        hub.update_info(IDS_KEY, [step for step, _ in self._kept])
        hub.update_info(FILES_KEY, list(self._kept))
        return [path for step, path in cut if (step, path) not in held]
