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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runnerx.suggest import close_matches
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

METHOD_NAMES = ("mean", "min", "max", "current")
_KEYS = ("data_src", "log_name", "method_name", "window_size")


@dataclass(frozen=True)
class CustomLog:
    """One checked ``custom_cfg`` entry: log ``method_name`` of ``data_src`` as ``log_name``."""

    data_src: str
    log_name: str
    method_name: str
    window_size: int | str | None

    def window(self, epoch_length: int) -> int | None:
        """The window in updates: 'epoch' is ``epoch_length``, 'global' (and None) all."""
        if self.window_size == "epoch":
            return epoch_length
        return None if self.window_size == "global" else self.window_size  # type: ignore[return-value]


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
    for key in entry:
        if key not in _KEYS:
            raise ValueAssertionError(
                f"{where} has an unknown key {key!r}{_did_you_mean(key, _KEYS)}"
            )
    data_src = entry.get("data_src")
    if not isinstance(data_src, str):
        raise ValueAssertionError(
            f"{where}.data_src must name a logged scalar, e.g. 'loss'; got {data_src!r}"
        )
    method_name = entry.get("method_name")
    if method_name not in METHOD_NAMES:
        raise ValueAssertionError(
            f"{where}.method_name must be one of {', '.join(map(repr, METHOD_NAMES))}, got "
            f"{method_name!r}{_did_you_mean(method_name, METHOD_NAMES)}"
        )
    window_size = entry.get("window_size")
    _check_window_size(window_size, method_name, where, by_epoch)
    log_name = entry.get("log_name", data_src)
    return CustomLog(data_src, log_name, method_name, window_size)


def _check_window_size(window_size: Any, method_name: str, where: str, by_epoch: bool) -> None:
    if window_size is None:
        return
    if method_name == "current":
        raise ValueAssertionError(f"{where}: method_name='current' takes no window_size")
    if window_size == "epoch" and not by_epoch:
        raise ValueAssertionError(
            f"{where}.window_size='epoch' needs log_processor.by_epoch=True; use an int or 'global'"
        )
    is_count = isinstance(window_size, int) and not isinstance(window_size, bool)
    if not (window_size in ("epoch", "global") or (is_count and window_size > 0)):
        raise ValueAssertionError(
            f"{where}.window_size must be a positive int, 'epoch' or 'global', got "
            f"{window_size!r}{_did_you_mean(window_size, ('epoch', 'global'))}"
        )


def _did_you_mean(value: Any, choices: tuple[str, ...]) -> str:
    close = close_matches(str(value), choices, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
