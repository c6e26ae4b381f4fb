"""The best checkpoints of ``CheckpointHook(save_best=...)``: the k best-scoring ones per metric
(``max_keep_best``), their MessageHub records, and which files go when a better one comes.

The MessageHub keeps, per metric, MMEngine's ``best_score`` / ``best_ckpt`` (the single best;
``best_score_<metric>`` / ``best_ckpt_<metric>`` with several metrics) and, with
``max_keep_best > 1``, ``best_ckpts`` (``best_ckpts_<metric>``): the kept ``(score, path)``
pairs, best first; and ``best_for`` (``best_for_<metric>``): the ``(metric, rule)`` they are
for. Checkpoints carry them, so a resumed run goes on pruning the right files; a run resumed
from a checkpoint without the list (an older runnerx, MMEngine, or ``max_keep_best=1``) starts
it from the single best. The records hold absolute paths: in a copied work dir, or a run
resumed into another one, they are taken to mean the files of the same names in this run's
folder; files elsewhere are never removed.

A resumed record of another metric or rule (``save_best`` or ``rule`` changed on resume) is not
compared with: the metric starts its own best, and the record's files stay. A record without
``best_for`` (an older runnerx's, MMEngine's) is taken to be the metric's when its files are
named ``best_<metric>_<step file>``, under the same rule; any other is treated as another
metric's, so that no file is removed, and no score compared, on a guess.
"""

from __future__ import annotations

import math
import numbers
import os
import pickle
import re
import shutil
from collections.abc import Callable, Sequence
from typing import Any

import torch

from runnerx.checkpoint.resume_checks import same_name_in
from runnerx.checkpoint.runner_state import find_latest_checkpoint, save_in_background
from runnerx.checkpoint.store_copies import CheckpointCopies
from runnerx.dist import is_main_process
from runnerx.fileio import after_pending_writes, failed_write
from runnerx.fileio.atomic import queued_by
from runnerx.hooks.metric_rule import RULES, MissingMetricError, check_rule, missing_metric
from runnerx.utils.errors import ValueAssertionError

#: The MessageHub info that lists the kept best checkpoints (with ``_<metric>`` for several).
KEPT_KEY = "best_ckpts"
#: The MessageHub info that says which ``(metric, rule)`` the records are for.
FOR_KEY = "best_for"
#: What follows ``best_<metric>_`` in a best checkpoint's name: the periodic checkpoint's name
#: (``epoch_3.pth``, ``iter_400.pth``, ``ckpt_003.pth``)
_STEP_FILE = re.compile(r"[A-Za-z]*_?\d+(\.\w+)*")
_WORST = {"greater": -math.inf, "less": math.inf}


class BestCheckpoints:
    """Saves and keeps the ``max_keep`` best checkpoints of each ``save_best`` metric::

        checkpoint=dict(type='CheckpointHook', save_best='accuracy/top1', max_keep_best=3)

    A score enters when it is better (by the metric's rule) than the worst kept one, or than
    nothing while fewer than ``max_keep`` are kept (a None or NaN score never enters); the
    worst kept one then goes once the new file is written. Equal scores keep their order: the
    earlier checkpoint ranks first, and a score equal to the worst kept one does not replace it
    (as Lightning's ``save_top_k``).
    """

    def __init__(self, max_keep: int, save_best: Sequence[str]) -> None:
        if isinstance(max_keep, bool) or not isinstance(max_keep, int):
            raise TypeError(f"CheckpointHook: max_keep_best must be an int >= 1, got {max_keep!r}")
        if max_keep < 1:
            raise ValueError(
                f"CheckpointHook: max_keep_best must be an int >= 1 (how many best checkpoints "
                f"to keep per save_best metric), got {max_keep!r}"
            )
        if max_keep > 1 and not save_best:
            raise ValueError(
                f"CheckpointHook: max_keep_best={max_keep} keeps the best checkpoints of the "
                "save_best metrics, but save_best is not set; set save_best (e.g. "
                "save_best='accuracy/top1') or leave max_keep_best at 1"
            )
        self.max_keep = max_keep
        self.several = len(save_best) > 1
        self.out_dir: str | None = None  # settled by resume()
        self.copies: CheckpointCopies | None = None
        # record key -> (score, path) best first; one key for the one metric, 'auto' or named
        self._kept: dict[str, list[tuple[Any, str | None]]] = {}
        # record key -> (the resumed records, their best_for) until the metric's rule is known
        self._unsettled: dict[str, tuple[list, Any]] = {}

    def record_key(self, name: str, metric: str) -> str:
        """MessageHub key of a record (MMEngine's names: ``best_score``, ``best_ckpt``)."""
        return f"{name}_{metric}" if self.several else name

    def resume(
        self,
        runner: Any,
        rules: dict[str, str | None],
        out_dir: str,
        copies: CheckpointCopies | None,
    ) -> None:
        """Settle where best checkpoints go; pick up the kept lists of the ``rules``' metrics
        from the MessageHub (what a resumed checkpoint recorded). Those of a named metric are
        settled now, 'auto''s at its first validation (see :meth:`_settle`)."""
        self.out_dir, self.copies = out_dir, copies
        hub = runner.message_hub
        for metric in rules:
            listed = hub.get_info(self.record_key(KEPT_KEY, metric))
            if listed is not None:
                recorded = [(score, path) for score, path in listed]
            else:
                score = hub.get_info(self.record_key("best_score", metric))
                path = hub.get_info(self.record_key("best_ckpt", metric))
                recorded = [] if score is None else [(score, path)]
            key = self.record_key(KEPT_KEY, metric)
            self._unsettled[key] = (recorded, hub.get_info(self.record_key(FOR_KEY, metric)))
        named = {metric: rule for metric, rule in rules.items() if metric != "auto"}
        self._settle(runner, named)  # 'auto''s rule and metric are known at its first scores

    def _settle(self, runner: Any, rules: dict[str, str]) -> None:
        """Once per metric, before its first score: drop a resumed record of another metric or
        rule (its files stay, logged), else take it over, cut to ``max_keep`` (removing the
        rest); records of files in another folder are logged (once for all metrics)."""
        elsewhere: set[str] = set()
        for metric, rule in rules.items():
            key = self.record_key(KEPT_KEY, metric)
            if key in self._unsettled:
                elsewhere |= self._take_over(runner, metric, rule, *self._unsettled.pop(key))
        if elsewhere:
            runner.logger.warning(
                f"CheckpointHook: the best checkpoints the resumed run recorded lie in "
                f"{', '.join(sorted(elsewhere))}, not in {self.out_dir}; they are left alone "
                "(their scores still rank: a new best checkpoint is saved here once it beats them)"
            )

    def _take_over(
        self, runner: Any, metric: str, rule: str, recorded: list, owner: Any
    ) -> set[str]:
        """Settle ``metric``'s resumed ``recorded`` (score, path) list; the folders of its files
        that lie outside the out dir."""
        key = self.record_key(KEPT_KEY, metric)
        hub = runner.message_hub
        self._kept[key] = []
        if recorded and not _records_of(owner, recorded, metric, rule):
            for name in ("best_score", "best_ckpt", KEPT_KEY, FOR_KEY):
                hub.pop_info(self.record_key(name, metric))
            was = f"is for {owner[0]} ({owner[1]})" if owner else "does not say its metric"
            files = ", ".join(os.path.basename(str(path)) for _, path in recorded if path)
            runner.logger.warning(
                f"CheckpointHook: the resumed best checkpoint record {was}, not {metric} "
                f"({rule}): {metric} starts its own best; the recorded files stay "
                f"({files or 'none'}), no longer replaced by save_best"
            )
            return set()
        # a path elsewhere keeps its score (the rank to beat), but not its file
        kept = [(score, in_out_dir(path, self.out_dir)) for score, path in recorded]
        self._kept[key] = kept[: self.max_keep]
        if self.max_keep == 1:  # MMEngine's records only, as k=1 has
            hub.pop_info(self.record_key(KEPT_KEY, metric))
        if recorded:
            self._record(hub, metric, rule)
        self._remove(runner, [path for _, path in kept[self.max_keep :] if path])
        return {
            os.path.dirname(path)
            for (_, path), (_, ours) in zip(recorded, kept)
            if path and not ours
        }

    def update(
        self, runner: Any, rules: dict[str, str], metrics: dict, step_file: str, at: str
    ) -> bool:
        """Save ``best_<metric>_<step_file>`` for each metric whose score enters the kept
        ones (``at``: '4 epoch' for the log); whether any did."""
        raise_if_a_save_failed(runner)
        entered = False
        self._settle(runner, rules)
        for metric, rule in rules.items():
            if metric not in metrics:
                where = "CheckpointHook: save_best metric"
                raise MissingMetricError(missing_metric(where, metric, metrics))
            filename = f"best_{metric}_{step_file}".replace("/", "_")
            path = os.path.join(self.out_dir, filename)
            score = best_score(metric, metrics[metric])
            dropped = self._enter(runner.message_hub, metric, rule, score, path)
            if dropped is None:
                continue
            entered = True
            with queued_by(runner):  # a failure is this run's, not another Runner's
                save_in_background(
                    runner,
                    self.out_dir,
                    filename,
                    save_optimizer=False,
                    save_param_scheduler=False,
                    meta=dict(epoch=runner.epoch, iter=runner.iter),
                )
                best = self._kept[self.record_key(KEPT_KEY, metric)][0][1] == path
                which = (
                    "The best checkpoint"
                    if best
                    else f"A checkpoint among the {self.max_keep} best"
                )
                runner.logger.info(
                    f"{which} with {score:.4f} {metric} at {at} is saved to {filename}."
                )
                if is_main_process():
                    upload_when_complete(self.copies, path, runner.logger)
                # queued behind the new file's background write: the old ones go once it is
                # whole
                after_pending_writes(lambda dropped=dropped: self._remove(runner, dropped))
        return entered

    def best_paths(self) -> list[str]:
        """The single best checkpoint of each metric (what ``published_keys`` publishes)."""
        return [kept[0][1] for kept in self._kept.values() if kept and kept[0][1]]

    def _enter(self, hub: Any, metric: str, rule: str, score: Any, path: str) -> list[str] | None:
        """Enter ``score`` of the checkpoint ``path`` about to be written when it is among the
        best; the paths it pushed out, or None if it did not enter."""
        key = self.record_key(KEPT_KEY, metric)
        # a kept file of this very name (a validation at the same step again) is rewritten
        # only by a better score than its own
        entries = self._kept.get(key, [])
        replaced = [old for old, at in entries if at == path]
        kept = [(old, at) for old, at in entries if at != path]
        if replaced:
            worst = replaced[0]
        else:
            worst = kept[-1][0] if len(kept) >= self.max_keep else _WORST[rule]
        if score is None or not RULES[rule](score, worst):
            return None
        place = next((i for i, (old, _) in enumerate(kept) if RULES[rule](score, old)), len(kept))
        kept.insert(place, (score, path))
        self._kept[key] = kept[: self.max_keep]
        self._record(hub, metric, rule)
        return [old for _, old in kept[self.max_keep :] if old]

    def _record(self, hub: Any, metric: str, rule: str) -> None:
        kept = self._kept[self.record_key(KEPT_KEY, metric)]
        if kept:
            hub.update_info(self.record_key("best_score", metric), kept[0][0])
            hub.update_info(self.record_key("best_ckpt", metric), kept[0][1])
            hub.update_info(self.record_key(FOR_KEY, metric), (metric, rule))
        if self.max_keep > 1:
            hub.update_info(self.record_key(KEPT_KEY, metric), list(kept))

    def _remove(self, runner: Any, paths: list[str]) -> None:
        if not is_main_process():
            return
        reason = "a better best" if self.max_keep == 1 else f"not among the {self.max_keep} best"
        for path in paths:
            remove_checkpoint(path, self.copies, runner.logger, reason, self.out_dir)


def best_score(metric: str, value: Any) -> float | None:
    """The ``save_best`` metric's ``value`` as a float: a real number, or a tensor or numpy
    value of one element (None, a metric that gave no value, is skipped as before);
    anything else is refused, naming the metric."""
    if value is None:
        return None
    # a tensor, numpy array or numpy scalar of one element -> its Python number
    count = value.numel() if isinstance(value, torch.Tensor) else getattr(value, "size", None)
    number = value.item() if count == 1 and hasattr(value, "item") else value
    if isinstance(number, numbers.Real):
        return float(number)
    raise TypeError(
        f"CheckpointHook.save_best={metric!r}: the metrics gave {metric}={value!r} "
        f"({type(value).__name__}), but the best checkpoint is chosen by comparing numbers: "
        f"make the metric's compute_metrics return a float (or a 0-dim tensor) for {metric!r}, "
        "or name another metric in save_best"
    )


def best_rules(
    save_best: list[str], rule: str | list[str] | None, infer: Callable[[str], str]
) -> dict[str, str | None]:
    """The rule of each ``save_best`` metric: ``rule`` (one, or one per metric), else
    ``infer(metric)``; None for 'auto' until the first metrics come."""
    if "auto" in save_best and len(save_best) > 1:
        raise ValueAssertionError(
            "CheckpointHook: save_best='auto' cannot be combined with other keys"
        )
    rules = rule if isinstance(rule, (list, tuple)) else [rule]
    if len(rules) not in (1, len(save_best)):
        raise ValueAssertionError(
            f"CheckpointHook: rule must be one rule or one per save_best key "
            f"({len(save_best)}), got {len(rules)}"
        )
    rules = [check_rule(item, "CheckpointHook") for item in rules]
    if len(rules) == 1:
        rules = rules * len(save_best)
    return {
        key: item or (None if key == "auto" else infer(key)) for key, item in zip(save_best, rules)
    }


def upload_when_complete(copies: CheckpointCopies | None, path: str, logger: Any) -> None:
    """Copy the checkpoint ``path`` to the store of ``out_dir`` (if any) once it is in place. A
    failed upload keeps the store's older copies (and fails the run at its end), but the local
    checkpoint is complete: what comes after it goes on."""
    if copies is not None:
        after_pending_writes(lambda: copies.upload(path, logger), independent=True)


def remove_checkpoint(
    path: str, copies: CheckpointCopies | None, logger: Any, reason: str, out_dir: str
) -> None:
    """Delete the checkpoint ``path`` (a file, or the folder of a sharded one) and its copy in
    the store of ``out_dir``; log it with ``reason``. A path outside the folder ``out_dir``
    (another run's, named in resumed records) is left alone."""
    if not _lies_in(path, out_dir):
        logger.warning(f"Left the checkpoint {path} alone ({reason}): it lies outside {out_dir}.")
        return
    removed = True
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.isfile(path):
        os.remove(path)
    else:
        removed = False
    if removed:
        logger.info(f"Removed the checkpoint {path} ({reason}).")
    if copies is not None:
        copies.remove(os.path.basename(path), logger)


def in_out_dir(path: str | None, out_dir: str) -> str | None:
    """The file a resumed record ``path`` means in this run's folder ``out_dir``: ``path`` when
    it lies there, else the file of the same name there (a copied work dir), else None."""
    if not path or _lies_in(path, out_dir):
        return path
    return same_name_in(out_dir, path)


def _records_of(owner: Any, recorded: list, metric: str, rule: str) -> bool:
    """Whether resumed best records are ``metric``'s under ``rule``: as their ``owner``
    (``best_for``) says, or, without one, as the names of all their files say."""
    if owner is not None:
        return tuple(owner) == (metric, rule)
    prefix = f"best_{metric}_".replace("/", "_")
    names = [os.path.basename(os.path.normpath(path)) if path else "" for _, path in recorded]
    return all(
        name.startswith(prefix) and _STEP_FILE.fullmatch(name[len(prefix) :]) for name in names
    )


def _lies_in(path: str, folder: str) -> bool:
    return os.path.realpath(os.path.dirname(os.path.normpath(path))) == os.path.realpath(folder)


def raise_if_a_save_failed(runner: Any) -> None:
    """At a save point: stop the run when an earlier checkpoint's background write (or what was
    queued behind it) failed; what was queued after it, pointing ``last_checkpoint`` at it and
    removing older checkpoints, did not run."""
    failure = failed_write(runner)
    if failure is None:
        return
    path, error = failure
    named = find_latest_checkpoint(str(runner.work_dir))
    raise OSError(
        f"{f'writing the checkpoint {path}' if path else 'a step after writing a checkpoint'} "
        f"failed: {error}; nothing older was removed, and "
        + (f"last_checkpoint still names {named}" if named else "no last_checkpoint was written")
    ) from error


def best_of_kept(candidates: Sequence[str]) -> str | None:
    """Of the ``best_*`` checkpoints that a ``max_keep_best > 1`` run keeps for its one
    ``save_best`` metric, the best-scoring one; None when no candidate's records list exactly
    these files (several metrics', or ones no such run wrote).

    Each best checkpoint records the kept list as it was when it was written: the newest one's
    is the list of the files there now. Candidates are read newest first (by time of change),
    so usually one is read; a copy that changed those times only costs more reads.
    """
    names = sorted(os.path.basename(os.path.normpath(path)) for path in candidates)
    for candidate in sorted(candidates, key=os.path.getmtime, reverse=True):
        listed = _kept_list_in(candidate)
        if listed and sorted(os.path.basename(str(path)) for _, path in listed) == names:
            best = os.path.basename(str(listed[0][1]))
            return next(path for path in candidates if os.path.basename(path) == best)
    return None


def _kept_list_in(path: str) -> list | None:
    """The kept list a best checkpoint (a file, or a sharded checkpoint's folder) records."""
    from runnerx.checkpoint.io import load_checkpoint

    if os.path.isdir(path):
        from runnerx.parallel.sharded_checkpoint import EXTRA_FILE

        path = os.path.join(path, EXTRA_FILE)
    try:
        checkpoint = load_checkpoint(path)
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError):
        return None  # not (or not wholly) a checkpoint, or an unsafe one: it says nothing
    hub = checkpoint.get("message_hub") if isinstance(checkpoint, dict) else None
    listed = (hub or {}).get("runtime_info", {}).get(KEPT_KEY)
    return listed if isinstance(listed, (list, tuple)) else None
