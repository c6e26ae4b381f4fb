"""MessageHub: where a run's components leave scalars and runtime facts for each other.

Hooks and loops write (``update_scalar('train/loss', loss)``), the log processor and other
hooks read (``get_scalar('train/loss').mean(10)``). Keys follow MMEngine: ``'train/lr'``,
``'train/loss'``, ``'train/time'``, ``'train/data_time'``, ``'val/<metric>'``; runtime info
``'epoch'``, ``'iter'``, ``'max_epochs'``, ``'max_iters'``.
"""

from __future__ import annotations

import copy
from typing import Any, ClassVar

from runnerx.suggest import close_matches

from .history_buffer import HistoryBuffer


class MessageHub:
    """Named scalars (:class:`HistoryBuffer`\\ s) and runtime information of one run.

    .. code-block:: python

        hub = MessageHub.get_instance('my_run')       # created, and now the current hub
        hub.update_scalar('train/loss', loss)          # float or 0-dim tensor, no sync
        hub.get_scalar('train/loss').mean(10)
        hub.update_info('epoch', 3)
        MessageHub.get_current_instance() is hub       # True

    A key updated with ``resumed=False`` is left out of :meth:`state_dict`.
    """

    _instances: ClassVar[dict[str, MessageHub]] = {}
    _current: ClassVar[MessageHub | None] = None

    def __init__(self, name: str = "runnerx", max_length: int = 10_000) -> None:
        self.instance_name = name
        self.max_length = max_length
        self._log_scalars: dict[str, HistoryBuffer] = {}
        self._runtime_info: dict[str, Any] = {}
        self._not_resumed: set[str] = set()

    @classmethod
    def get_instance(cls, name: str, **kwargs: Any) -> MessageHub:
        """The hub called ``name`` (created with ``kwargs`` if new); it becomes current."""
        hub = cls._instances.get(name)
        if hub is None:
            hub = cls._instances[name] = cls(name, **kwargs)
        MessageHub._current = hub
        return hub

    @classmethod
    def get_current_instance(cls) -> MessageHub:
        """The hub most recently made current (a hub named 'runnerx' if there is none yet)."""
        if MessageHub._current is None:
            return cls.get_instance("runnerx")
        return MessageHub._current

    @property
    def log_scalars(self) -> dict[str, HistoryBuffer]:
        """Every scalar's buffer by key (the hub's own dict, not a copy)."""
        return self._log_scalars

    @property
    def runtime_info(self) -> dict[str, Any]:
        """Every runtime fact by key (the hub's own dict, not a copy)."""
        return self._runtime_info

    def update_scalar(self, key: str, value: Any, count: int = 1, resumed: bool = True) -> None:
        """Record ``value`` (a number or a 0-dim tensor, kept as is until read) under ``key``."""
        buffer = self._log_scalars.get(key)
        if buffer is None:
            buffer = self._log_scalars[key] = HistoryBuffer(self.max_length)
        try:
            buffer.update(value, count)
        except (TypeError, ValueError) as error:
            if not len(buffer):
                del self._log_scalars[key]
            raise type(error)(f"message_hub.update_scalar({key!r}, ...): {error}") from None
        if not resumed:
            self._not_resumed.add(key)

    def update_scalars(self, log_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_scalar` for each item; a value may be a dict ``{value, count}``."""
        for key, value in log_dict.items():
            if isinstance(value, dict):
                self.update_scalar(key, value["value"], value.get("count", 1), resumed)
            else:
                self.update_scalar(key, value, resumed=resumed)

    def get_scalar(self, key: str) -> HistoryBuffer:
        """The buffer of ``key``; a KeyError naming the known keys when there is none."""
        buffer = self._log_scalars.get(key)
        if buffer is None:
            raise KeyError(_missing_key_message("scalar", key, self._log_scalars))
        return buffer

    def update_info(self, key: str, value: Any, resumed: bool = True) -> None:
        """Set the runtime fact ``key`` (any object) to ``value``."""
        self._runtime_info[key] = value
        if not resumed:
            self._not_resumed.add(key)

    def update_info_dict(self, info_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_info` for each item."""
        for key, value in info_dict.items():
            self.update_info(key, value, resumed)

    def get_info(self, key: str, default: Any = None) -> Any:
        """The runtime fact ``key``, or ``default`` when it was never set."""
        return self._runtime_info.get(key, default)

    def pop_info(self, key: str, default: Any = None) -> Any:
        """Remove the runtime fact ``key`` and return it (``default`` when it was never set)."""
        return self._runtime_info.pop(key, default)

    def state_dict(self) -> dict:
        """Scalars (as plain floats) and runtime info to save in a checkpoint."""
        return {
            "log_scalars": {
                key: buffer.state_dict()
                for key, buffer in self._log_scalars.items()
                if key not in self._not_resumed
            },
            "runtime_info": {
                key: copy.deepcopy(value)
                for key, value in self._runtime_info.items()
                if key not in self._not_resumed
            },
            "resumed_keys": {
                key: key not in self._not_resumed
                for key in (*self._log_scalars, *self._runtime_info)
            },
        }

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what :meth:`state_dict` saved, so smoothed values continue after resume.

        The ``message_hub`` entry of an MMEngine checkpoint (its buffers are objects with a
        ``data`` pair of value and count arrays) loads too.
        """
        for key in ("log_scalars", "runtime_info"):
            if key not in state_dict:
                raise KeyError(f"a MessageHub state_dict needs a {key!r} entry")
        for key, saved in state_dict["log_scalars"].items():
            if isinstance(saved, dict):
                self._log_scalars[key] = HistoryBuffer.from_state_dict(saved)
            else:
                values, counts = saved.data
                self._log_scalars[key] = HistoryBuffer.from_history(values, counts, self.max_length)
        self._runtime_info.update(copy.deepcopy(state_dict["runtime_info"]))
        for key, resumed in state_dict.get("resumed_keys", {}).items():
            if not resumed:
                self._not_resumed.add(key)


def _missing_key_message(kind: str, key: str, known: dict) -> str:
    close = close_matches(key, list(known), n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return f"no {kind} {key!r} in the message hub.{hint} Known keys: {sorted(known) or 'none'}"
