"""LogProcessor: turns the message hub's scalars into MMEngine-style log lines and a tag dict.

::

    Epoch(train)  [1][10/23]  lr: 1.0000e-02  eta: 0:00:12  time: 0.0123  data_time: 0.0012  ...
        ... loss: 2.3012
    Iter(train) [  10/1000]  lr: 1.0000e-02  eta: 0:01:40  time: 0.1002  data_time: 0.0011  ...
    Epoch(val) [1][ 5/16]  eta: 0:00:01  time: 0.0100  data_time: 0.0010
    Epoch(val) [1][16/16]    accuracy/top1: 96.2000  data_time: 0.0010  time: 0.0100
    Epoch(val) [2][16/16] (mid-epoch, iter 29)    accuracy/top1: 96.8000  ...

The last form is a validation part-way through training epoch 2 (``val_check_interval``),
after 29 iterations; epoch ends keep MMEngine's lines.

LoggerHook calls it on logging iterations only (reading the hub may wait for the device).
In a distributed run, every rank calls it, and the training losses it shows are averaged over
the ranks (one all_reduce per logged line).
"""

from __future__ import annotations

import datetime
import re
from typing import Any

import torch

from runnerx.device import get_max_cuda_memory
from runnerx.dist import all_gather_object, all_reduce, get_world_size
from runnerx.registry import LOG_PROCESSORS

from .custom_log_cfg import parse_custom_cfg
from .history_buffer import HistoryBuffer, fold_buffers

_TIME_KEYS = ("time", "data_time")


@LOG_PROCESSORS.register_module()
class LogProcessor:
    """Formats ``runner.message_hub`` scalars after an iteration or a val/test epoch.

    Training scalars whose name matches ``mean_pattern`` are averaged over the last
    ``window_size`` updates, the others show their newest value; a val/test result shows
    that validation's metrics, whatever their names (MMEngine smooths a metric named like a
    loss over past validations), and its times averaged over its batches; ``custom_cfg``
    (for any mode) adds or changes statistics
    (see :mod:`runnerx.logging.custom_log_cfg`). ``log_with_hierarchy=True`` keeps the
    ``train/`` / ``val/`` prefix in the returned tag (what the visualizer receives) and, as
    MMEngine does, in the names of a val/test result line.

    In a distributed run, the training values whose name contains ``'loss'`` (the losses
    ``train_step`` returned, smoothed or as ``custom_cfg`` says; not AMP's ``loss_scale``)
    are the mean over all ranks, where MMEngine shows rank 0's alone. Every rank calls
    :meth:`get_log_after_iter` on the same iterations (LoggerHook does) and logs the same
    loss names, so that the one all_reduce this takes meets on every rank.

    .. code-block:: python

        log_processor = dict(
            type='LogProcessor', window_size=20, by_epoch=True,
            custom_cfg=[dict(data_src='loss', log_name='loss_epoch',
                             method_name='mean', window_size='epoch')])
    """

    def __init__(
        self,
        window_size: int = 10,
        by_epoch: bool = True,
        custom_cfg: list[dict] | None = None,
        num_digits: int = 4,
        log_with_hierarchy: bool = False,
        mean_pattern: str = r".*(loss|time|data_time|grad_norm).*",
    ) -> None:
        for key, value, least in (("window_size", window_size, 1), ("num_digits", num_digits, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                kind = "a positive int" if least else "an int >= 0"
                raise ValueError(f"log_processor.{key} must be {kind}, got {value!r}")
        self.window_size = window_size
        self.by_epoch = by_epoch
        self.custom_cfg = list(custom_cfg or [])
        self.num_digits = num_digits
        self.log_with_hierarchy = log_with_hierarchy
        self.mean_pattern = re.compile(mean_pattern)
        self._custom_logs = parse_custom_cfg(custom_cfg, by_epoch)
        self._smoothed: dict[str, bool] = {}  # hub key -> whether its values are smoothed

    def get_log_after_iter(self, runner: Any, batch_idx: int, mode: str) -> tuple[dict, str]:
        """The tag (scalars as floats, plus 'epoch', 'iter', 'memory') and the log line
        after iteration ``batch_idx`` of ``mode`` ('train', 'val' or 'test')."""
        _check_mode(mode, ("train", "val", "test"))
        scalars = self._collect_scalars(runner.message_hub, mode, epoch_length=batch_idx + 1)
        tag = self._tag(scalars, mode)
        header = self._iter_header(runner, batch_idx, mode, tag)
        parts: list[str] = []
        lr_names = [name for name in scalars if name.endswith("lr")]
        if lr_names:
            parts.append(
                " ".join(f"{name}: {scalars.pop(name):.{self.num_digits}e}" for name in lr_names)
            )
        if all(name in scalars for name in _TIME_KEYS):
            eta = self._eta_seconds(runner, batch_idx, mode)
            parts.append(f"eta: {datetime.timedelta(seconds=int(eta))}")
            if mode == "train":  # MMEngine's 'eta' info (it updates it on every iteration)
                runner.message_hub.update_info("eta", eta)
            parts.extend(self._format(name, scalars.pop(name)) for name in _TIME_KEYS)
        memory = _max_memory_mb(runner)
        if memory is not None:
            parts.append(f"memory: {memory}")
            tag["memory"] = memory
        if mode == "train":
            parts.extend(self._format(name, value) for name, value in scalars.items())
        # MMEngine's spacing: val/test lines set their header apart by four spaces
        gap = "  " if mode == "train" else "    "
        return tag, f"{header}{gap}{'  '.join(parts)}".rstrip()

    def get_log_after_epoch(
        self, runner: Any, batch_idx: int, mode: str, with_non_scalar: bool = False
    ) -> tuple[dict, str]:
        """The tag (metrics and epoch-mean times) and the log line after a val/test epoch.

        Runtime infos under ``'<mode>/'`` that are not scalars (a confusion matrix, say) are
        shown in the line, and put in the tag when ``with_non_scalar`` is True.
        """
        _check_mode(mode, ("val", "test"))
        length = _dataloader_length(runner, mode)
        by_epoch = self.by_epoch and not trains_by_iteration(runner)
        if by_epoch and mode == "val":
            header = f"Epoch(val) [{self._epoch(runner, mode)}][{length}/{length}]"
        elif by_epoch:
            header = f"Epoch(test) [{length}/{length}]"
        else:
            header = f"Iter({mode}) [{length}/{length}]"
        if mode == "val":
            header += _mid_epoch_note(runner)
        hub = runner.message_hub
        scalars = self._collect_scalars(hub, mode, epoch_length=length)
        custom_sources = {log.data_src for log in self._custom_logs}
        times = {}  # averaged over this epoch unless custom_cfg says otherwise; shown last
        for name in scalars:
            if name in _TIME_KEYS:
                buffer = hub.log_scalars.get(f"{mode}/{name}")
                by_default = buffer is not None and name not in custom_sources
                times[name] = buffer.mean(length) if by_default else scalars[name]
        metrics = {name: value for name, value in scalars.items() if name not in times}
        non_scalars = {
            key[len(mode) + 1 :]: value
            for key, value in hub.runtime_info.items()
            if key.startswith(f"{mode}/")
        }
        prefix = f"{mode}/" if self.log_with_hierarchy else ""  # as the tags, as MMEngine
        items = [
            self._format(prefix + name, value)
            for name, value in (*metrics.items(), *non_scalars.items(), *times.items())
        ]
        tag = self._tag(metrics, mode)
        if with_non_scalar:
            tag.update(self._tag(non_scalars, mode))
        tag.update(self._tag(times, mode))
        return tag, f"{header}    " + "  ".join(items)

    def _collect_scalars(self, hub: Any, mode: str, epoch_length: int) -> dict[str, Any]:
        """``mode``'s scalars without the prefix: smoothed, newest (as an int or a bool when
        it was recorded as one), or as custom_cfg says (losses averaged over the ranks when
        training distributed). Of val/test scalars only the times are smoothed: a metric shows
        the validation that just ran."""
        prefix = f"{mode}/"
        buffers = {
            key[len(prefix) :]: buffer
            for key, buffer in hub.log_scalars.items()
            if key.startswith(prefix) and len(buffer)
        }
        # every tensor of every buffer to a float in one transfer, not one per buffer
        fold_buffers(buffer for buffer in buffers.values() if isinstance(buffer, HistoryBuffer))
        scalars: dict[str, Any] = {}
        smoothed = self._smoothed
        for name, buffer in buffers.items():
            smooth = smoothed.get(prefix + name)
            if smooth is None:
                matches = self.mean_pattern.search(name) is not None
                smooth = matches and (mode == "train" or name in _TIME_KEYS)
                smoothed[prefix + name] = smooth
            if smooth:
                scalars[name] = buffer.mean(self.window_size)
            else:  # a count of 7 shows as 7, a flag as True (MMEngine's buffer keeps the type)
                scalars[name] = buffer.current_as_recorded()
        for log in self._custom_logs:
            buffer = hub.log_scalars.get(prefix + log.data_src)
            if buffer is not None and len(buffer):
                scalars[log.log_name] = log.value(buffer, epoch_length)
        if mode == "train" and get_world_size() > 1:
            _average_losses_over_ranks(scalars)
        return scalars

    def _tag(self, values: dict[str, Any], mode: str) -> dict[str, Any]:
        if self.log_with_hierarchy:
            return {f"{mode}/{name}": value for name, value in values.items()}
        return dict(values)

    def _iter_header(self, runner: Any, batch_idx: int, mode: str, tag: dict) -> str:
        """``Epoch(train)  [1][10/23]`` / ``Iter(train) [  10/1000]``; adds the position to
        ``tag`` ('epoch' for epoch-based train/val lines, 'iter': the global iteration)."""
        max_epochs = runner.max_epochs if mode == "train" else _recorded_max_epochs(runner)
        by_epoch = self.by_epoch and not trains_by_iteration(runner)
        if by_epoch or mode != "train":
            position = f"[{_aligned(batch_idx + 1, _dataloader_length(runner, mode))}]"
        else:
            position = f"[{_aligned(runner.iter + 1, runner.max_iters)}]"
        if not by_epoch:
            header = f"Iter({mode}) {position}"
        elif mode == "test":
            header = f"Epoch(test) {position}"
        else:
            epoch = tag["epoch"] = self._epoch(runner, mode)
            # right-align the epoch so that the lines of epochs 9 and 10 line up
            width = len(str(max_epochs)) + 3 if max_epochs else 0
            header = f"Epoch({mode}){f' [{epoch}]'.rjust(width)}{position}"
        if mode == "val":
            header += _mid_epoch_note(runner)
        tag["iter"] = runner.iter + 1 if max_epochs else 0
        return header

    @staticmethod
    def _epoch(runner: Any, mode: str) -> int:
        """The 1-based epoch a train line is in; for val, the epochs trained so far
        (validation runs after ``runner.epoch`` was counted up), or the epoch in progress
        for a validation part-way through it."""
        if mode == "train":
            return runner.epoch + 1
        return runner.epoch + 1 if _mid_epoch_note(runner) else runner.epoch

    @staticmethod
    def _eta_seconds(runner: Any, batch_idx: int, mode: str) -> float:
        """Mean iteration time so far times the iterations left (of the run when training,
        of this loop otherwise)."""
        times = runner.message_hub.get_scalar(f"{mode}/time")
        if mode == "train":
            return times.mean() * max(runner.max_iters - runner.iter - 1, 0)
        remaining = _dataloader_length(runner, mode) - batch_idx - 1
        return times.mean(batch_idx + 1) * max(remaining, 0)

    def _format(self, name: str, value: Any) -> str:
        if isinstance(value, float):
            return f"{name}: {value:.{self.num_digits}f}"
        if hasattr(value, "__array__"):
            # a tensor or an array, printed (summarised when large) on the one line:
            # MMEngine's line breaks around it split the record for grep and log readers
            return f"{name}: {' '.join(str(value).split())}"
        return f"{name}: {value}"


def _is_rank_averaged(name: str) -> bool:
    """Whether a training scalar's logged value is its mean over the ranks: a loss (a name
    containing 'loss'), but not AMP's 'loss_scale'."""
    return "loss" in name and name != "loss_scale"


def _average_losses_over_ranks(scalars: dict[str, Any]) -> None:
    """Replace each loss value by its mean over the ranks: one all_reduce of them all, which
    every rank must reach."""
    names = [name for name in scalars if _is_rank_averaged(name)]
    if not names:
        return
    values = torch.tensor([float(scalars[name]) for name in names], dtype=torch.float64)
    for name, value in zip(names, all_reduce(values, op="mean").tolist(), strict=True):
        scalars[name] = value


def losses_averaged_over_ranks(hub_state: dict) -> dict:
    """``hub_state`` (a :meth:`MessageHub.state_dict`, for a checkpoint) with the training
    losses' histories replaced by their mean over the ranks, value by value, so that a
    resumed run's windows start as the uninterrupted run's did: the logged loss is the mean
    over the ranks of each rank's window mean, which is linear in the values (exact when
    the ranks record the same counts, as losses do: one per iteration). The global min/max
    become the mean of the ranks' own.

    Every rank calls it at the same point (an all_gather of the buffers' lengths, then one
    all_reduce); in a single process it returns ``hub_state`` at no cost.
    """
    if get_world_size() == 1:
        return hub_state
    buffers = hub_state["log_scalars"]
    shapes = {
        key: (len(state["values"]), state["num_updates"], state["total_count"])
        for key, state in buffers.items()
        if key.startswith("train/")
        and _is_rank_averaged(key.removeprefix("train/"))
        and state["num_updates"]
    }
    every_rank = all_gather_object(shapes)
    # a loss some rank lacks or recorded differently keeps this rank's own history; sorted,
    # as the ranks may have created their buffers in another order
    keys = sorted(
        key for key, shape in shapes.items() if all(s.get(key) == shape for s in every_rank)
    )
    if not keys:
        return hub_state
    numbers = [
        number
        for key in keys
        for number in (
            *buffers[key]["values"],
            buffers[key]["total"],
            buffers[key]["min"],
            buffers[key]["max"],
        )
    ]
    means = all_reduce(torch.tensor(numbers, dtype=torch.float64), op="mean").tolist()
    start = 0
    for key in keys:
        end = start + len(buffers[key]["values"])
        total, low, high = means[end : end + 3]
        buffers[key] = {
            **buffers[key],
            "values": means[start:end],
            "total": total,
            "min": low,
            "max": high,
        }
        start = end + 3
    return hub_state


def trains_by_iteration(runner: Any) -> bool:
    """Whether ``runner`` has built a training loop that counts iterations (runnerx's
    IterBasedTrainLoop or a subclass). Its lines are ``Iter(...)`` ones whatever
    ``log_processor.by_epoch`` says (MMEngine prints ``Epoch(train) [1][6/4]``: the iteration
    of the run over the length of the dataloader), and LoggerHook logs its validations at
    ``runner.iter``. Asks only a loop that was built, as :func:`_mid_epoch_note` does."""
    return getattr(getattr(runner, "_train_loop", None), "unit", None) == "iteration"


def _check_mode(mode: str, allowed: tuple[str, ...]) -> None:
    if mode not in allowed:
        raise ValueError(f"mode must be one of {', '.join(map(repr, allowed))}, got {mode!r}")


def _aligned(current: int, total: int) -> str:
    """``' 5/16'``: the count right-aligned to the width of the total."""
    return f"{str(current).rjust(len(str(total)))}/{total}"


def _mid_epoch_note(runner: Any) -> str:
    """``' (mid-epoch, iter 29)'`` while the training loop validates part-way through an
    epoch (``train_cfg.val_check_interval``), else ``''``. Asks only a training loop that was
    built: a validation-only run has none (``runner.train_loop`` would build one)."""
    loop = getattr(runner, "_train_loop", None)
    if getattr(loop, "validating_mid_epoch", False) is True:
        return f" (mid-epoch, iter {runner.iter})"
    return ""


def _dataloader_length(runner: Any, mode: str) -> int:
    return len(getattr(runner, f"{mode}_dataloader"))


def _recorded_max_epochs(runner: Any) -> int | None:
    """'max_epochs' as RuntimeInfoHook recorded it for training; None in a validation- or
    test-only run. (Asking ``runner.max_epochs`` there would build, or fail to build, a
    training loop.)"""
    return runner.message_hub.get_info("max_epochs")


def _max_memory_mb(runner: Any) -> int | None:
    """Peak CUDA memory (MB) allocated on the model's device since the last call, or None
    when the model is not on CUDA. Resets the peak, as MMEngine does."""
    if not torch.cuda.is_initialized():  # then nothing is on CUDA (a cheap check)
        return None
    model = getattr(runner, "unwrapped_model", None)
    if model is None:
        model = runner.model
    parameters = getattr(model, "parameters", None)
    parameter = next(parameters(), None) if parameters is not None else None
    if parameter is None or parameter.device.type != "cuda":
        return None
    return get_max_cuda_memory(parameter.device)
