"""``log_processor.custom_cfg``: extra or changed statistics of logged scalars, checked once.

.. code-block:: python

    log_processor = dict(
        type='LogProcessor',
        custom_cfg=[
            # also log the loss averaged over the epoch so far, as 'loss_epoch'
            dict(data_src='loss', log_name='loss_epoch', method_name='mean', window_size='epoch'),
            # show the largest grad_norm of the last 50 iterations instead of the mean
            dict(data_src='grad_norm', method_name='max', window_size=50),
        ])

``method_name`` may also name a statistic added with ``HistoryBuffer.register_statistics``;
it gets ``window_size`` (when given) and the entry's other keys as keyword arguments.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from runnerx.suggest import ASIDE, did_you_mean
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

from .history_buffer import HistoryBuffer

METHOD_NAMES = ("mean", "min", "max", "current")
_KEYS = ("data_src", "log_name", "method_name", "window_size")


@dataclass(frozen=True)
class CustomLog:
    """One checked ``custom_cfg`` entry: log ``method_name`` of ``data_src`` as ``log_name``.

    ``registered_kwargs`` is None for a built-in statistic; for one added with
    ``HistoryBuffer.register_statistics``, the keyword arguments it gets: the entry's keys
    other than data_src, log_name and method_name, as MMEngine passes them."""

    data_src: str
    log_name: str
    method_name: str
    window_size: int | str | None
    registered_kwargs: dict[str, Any] | None = None

    def window(self, epoch_length: int) -> int | None:
        """The window in updates: 'epoch' is ``epoch_length``, 'global' (and None) all."""
        if self.window_size == "epoch":
            return epoch_length
        return None if self.window_size == "global" else self.window_size  # type: ignore[return-value]

    def value(self, buffer: HistoryBuffer, epoch_length: int) -> Any:
        """This entry's statistic of ``buffer`` (which holds at least one value)."""
        kwargs = self.registered_kwargs
        if kwargs is None:
            if self.method_name == "current":  # an int or a bool shows as one, as in MMEngine
                return buffer.current_as_recorded()
            return buffer.statistics(self.method_name, self.window(epoch_length))
        if self.window_size is not None:
            # an int, as MMEngine passes it ('global': every update so far), for statistics
            # that slice buffer.data with it
            window = self.window(epoch_length)
            kwargs = {**kwargs, "window_size": buffer.count if window is None else window}
        return buffer.statistics(self.method_name, **kwargs)


def parse_custom_cfg(custom_cfg: list[dict] | None, by_epoch: bool) -> list[CustomLog]:
    """Check every entry of ``custom_cfg``; errors name the entry and what was expected."""
    if custom_cfg is None:
        return []
    if not isinstance(custom_cfg, (list, tuple)):
        raise TypeAssertionError(
            f"log_processor.custom_cfg must be a list of dicts, got {type(custom_cfg).__name__}"
        )
    logs: list[CustomLog] = []
    owners: dict[str, int] = {}
    for index, entry in enumerate(custom_cfg):
        log = _parse_entry(entry, f"log_processor.custom_cfg[{index}]", by_epoch)
        if log.log_name in owners:
            raise ValueAssertionError(
                f"log_processor.custom_cfg[{index}] logs {log.log_name!r}, which "
                f"custom_cfg[{owners[log.log_name]}] logs already; give one of them another "
                "log_name"
            )
        owners[log.log_name] = index
        logs.append(log)
    return logs


def _parse_entry(entry: Any, where: str, by_epoch: bool) -> CustomLog:
    if not isinstance(entry, dict):
        raise TypeAssertionError(
            f"{where} must be a dict like dict(data_src='loss', method_name='mean', "
            f"window_size=100), got {type(entry).__name__}"
        )
    method_name = entry.get("method_name")
    # looked up first, as HistoryBuffer.statistics does
    statistics = HistoryBuffer._custom_statistics
    registered = statistics.get(method_name) if isinstance(method_name, str) else None
    if registered is None:
        for key in entry:
            if key not in _KEYS:
                raise ValueAssertionError(
                    f"{where} has an unknown key {key!r}{did_you_mean(key, _KEYS, form=ASIDE)}"
                )
    data_src = entry.get("data_src")
    if not isinstance(data_src, str):
        raise ValueAssertionError(
            f"{where}.data_src must name a logged scalar, e.g. 'loss'; got {data_src!r}"
        )
    if registered is None and method_name not in METHOD_NAMES:
        known = (*METHOD_NAMES, *statistics)
        added = ", ".join(map(repr, statistics)) or "none so far"
        raise ValueAssertionError(
            f"{where}.method_name must be one of {', '.join(map(repr, METHOD_NAMES))} or a "
            f"statistic added with HistoryBuffer.register_statistics (added: {added}), got "
            f"{method_name!r}{did_you_mean(method_name, known, form=ASIDE)}"
        )
    window_size = entry.get("window_size")
    takes_window = registered is not None or method_name != "current"
    _check_window_size(window_size, where, by_epoch, takes_window)
    log_name = entry.get("log_name", data_src)
    if registered is None:
        return CustomLog(data_src, log_name, method_name, window_size)
    kwargs = {key: value for key, value in entry.items() if key not in _KEYS[:3]}
    _check_arguments(registered, kwargs, f"{where}: method_name={method_name!r}")
    return CustomLog(data_src, log_name, method_name, window_size, kwargs)


def _check_window_size(window_size: Any, where: str, by_epoch: bool, takes_window: bool) -> None:
    if window_size is None:
        return
    if not takes_window:
        raise ValueAssertionError(f"{where}: method_name='current' takes no window_size")
    if window_size == "epoch" and not by_epoch:
        raise ValueAssertionError(
            f"{where}.window_size='epoch' needs log_processor.by_epoch=True; use an int or 'global'"
        )
    is_count = isinstance(window_size, int) and not isinstance(window_size, bool)
    if not (window_size in ("epoch", "global") or (is_count and window_size > 0)):
        raise ValueAssertionError(
            f"{where}.window_size must be a positive int, 'epoch' or 'global', got "
            f"{window_size!r}{did_you_mean(window_size, ('epoch', 'global'), form=ASIDE)}"
        )


def _check_arguments(statistic: Any, kwargs: dict[str, Any], where: str) -> None:
    """Refuse, at start-up, keys that a registered statistic cannot take as keyword
    arguments (or required arguments the entry lacks)."""
    try:
        signature = inspect.signature(statistic)
    except (TypeError, ValueError):  # a builtin without a signature: left to the call
        return
    try:
        signature.bind(None, **kwargs)  # None: the buffer, passed first
    except TypeError as error:
        name = statistic.__name__
        call = "".join(f", {key}=..." for key in kwargs)
        raise ValueAssertionError(
            f"{where} names {name}{signature} (added with HistoryBuffer.register_statistics), "
            f"which the entry's keys would call as {name}(buffer{call}): {error}"
        ) from None
