"""MessageHub: where a run's components leave scalars and runtime facts for each other.

Hooks and loops write (``update_scalar('train/loss', loss)``), the log processor and other
hooks read (``get_scalar('train/loss').mean(10)``). Keys follow MMEngine: ``'train/lr'``,
``'train/loss'``, ``'train/time'``, ``'train/data_time'``, ``'val/<metric>'``; runtime info
``'epoch'``, ``'iter'``, ``'max_epochs'``, ``'max_iters'``.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from runnerx.suggest import SENTENCE, did_you_mean
from runnerx.utils.errors import KeyAssertionError, TypeAssertionError, ValueAssertionError
from runnerx.utils.manager import ManagerMixin

from .history_buffer import HistoryBuffer

_logger = logging.getLogger(__name__)


class MessageHub(ManagerMixin):
    """Named scalars (:class:`HistoryBuffer`\\ s) and runtime information of one run.

    .. code-block:: python

        hub = MessageHub.get_instance('my_run')       # created, and now the current hub
        hub.update_scalar('train/loss', loss)          # float or 0-dim tensor, no sync
        hub.get_scalar('train/loss').mean(10)
        hub.update_info('epoch', 3)
        MessageHub.get_current_instance() is hub       # True

    A key updated with ``resumed=False`` is left out of :meth:`state_dict`; as in MMEngine,
    a key keeps the ``resumed`` it was first given (a later update with the other value is an
    error naming the key). As in MMEngine,
    a hub can start with ``log_scalars`` (key -> :class:`HistoryBuffer`), ``runtime_info``
    and ``resumed_keys`` (key -> False leaves that key out of :meth:`state_dict`).
    """

    def __init__(
        self,
        name: str = "runnerx",
        log_scalars: dict[str, HistoryBuffer] | None = None,
        runtime_info: dict[str, Any] | None = None,
        resumed_keys: dict[str, bool] | None = None,
        *,
        max_length: int = 10_000,
    ) -> None:
        super().__init__(name)
        self.max_length = max_length
        self._log_scalars: dict[str, HistoryBuffer] = dict(log_scalars or {})
        self._runtime_info: dict[str, Any] = dict(runtime_info or {})
        self._not_resumed: set[str] = set()
        for key, buffer in self._log_scalars.items():
            if not isinstance(buffer, HistoryBuffer):
                raise TypeAssertionError(
                    f"MessageHub: log_scalars[{key!r}] must be a HistoryBuffer, "
                    f"got {type(buffer).__name__}"
                )
        for key, resumed in (resumed_keys or {}).items():
            if key not in self._log_scalars and key not in self._runtime_info:
                raise ValueAssertionError(
                    f"MessageHub: resumed_keys names {key!r}, which is in neither log_scalars "
                    "nor runtime_info"
                )
            if not resumed:
                self._not_resumed.add(key)

    @classmethod
    def get_instance(cls, name: str, **kwargs: Any) -> MessageHub:
        """The hub called ``name`` (created with ``kwargs`` if new); it becomes current."""
        hub = super().get_instance(name, **kwargs)
        hub.make_current()
        return hub

    @classmethod
    def new_instance(cls, name: str, **kwargs: Any) -> MessageHub:
        """A new, empty hub called ``name`` (built with ``kwargs``), replacing any earlier hub
        of that name; it becomes current. Each Runner starts with one, so that two runs of
        one config started within the same second share nothing."""
        hub = cls(name, **kwargs)
        hub._register_instance()
        return hub

    @classmethod
    def get_current_instance(cls) -> MessageHub:
        """The hub most recently made current (a hub named 'runnerx' if there is none yet)."""
        current = cls._current
        if current is None:
            return cls.get_instance("runnerx")
        return current

    @property
    def log_scalars(self) -> dict[str, HistoryBuffer]:
        """Every scalar's buffer by key (the hub's own dict, not a copy)."""
        return self._log_scalars

    @property
    def runtime_info(self) -> dict[str, Any]:
        """Every runtime fact by key (the hub's own dict, not a copy)."""
        return self._runtime_info

    def update_scalar(self, key: str, value: Any, count: int = 1, resumed: bool = True) -> None:
        """Record ``value`` (a number or a 0-dim tensor, kept as is until read) under ``key``;
        ``resumed`` must be what it was for ``key`` before."""
        if not resumed or self._not_resumed:
            self._check_resumed(key, resumed)
        buffer = self._log_scalars.get(key)
        created = buffer is None
        if created:
            buffer = self._log_scalars[key] = HistoryBuffer(max_length=self.max_length)
        try:
            buffer.update(value, count)
        except (TypeError, ValueError) as error:
            if created:
                del self._log_scalars[key]
            # also MMEngine's AssertionError (a tensor of several values: a ValueError first)
            both = ValueAssertionError if isinstance(error, ValueError) else TypeAssertionError
            raise both(f"message_hub.update_scalar({key!r}, ...): {error}") from None
        if not resumed:
            self._not_resumed.add(key)

    def update_scalars(self, log_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_scalar` for each item; a value may be a dict ``{value, count}``."""
        try:
            items = log_dict.items()
        except AttributeError:
            raise TypeAssertionError(
                "message_hub.update_scalars: log_dict must be a dict, got "
                f"{type(log_dict).__name__}"
            ) from None
        for key, value in items:
            if not isinstance(value, dict):
                self.update_scalar(key, value, resumed=resumed)
                continue
            try:
                logged = value["value"]
            except KeyError:
                raise KeyAssertionError(
                    f"message_hub.update_scalars: {key!r} is a dict without a 'value' entry "
                    f"({value!r}); give dict(value=..., count=...) or the value itself"
                ) from None
            self.update_scalar(key, logged, value.get("count", 1), resumed)

    def scalar_buffer(self, key: str) -> HistoryBuffer:
        """The buffer of ``key``, created empty when new: for code that records ``key`` on
        every iteration through :meth:`HistoryBuffer.appender`, as the default hooks do.

        The hub keeps a key's buffer object for its whole life (:meth:`load_state_dict` loads
        into it), so an appender taken once keeps recording where readers look.
        """
        buffer = self._log_scalars.get(key)
        if buffer is None:
            buffer = self._log_scalars[key] = HistoryBuffer(max_length=self.max_length)
        return buffer

    def get_scalar(self, key: str) -> HistoryBuffer:
        """The buffer of ``key``; a KeyError naming the known keys when there is none."""
        buffer = self._log_scalars.get(key)
        if buffer is None:
            raise KeyError(_missing_key_message("scalar", key, self._log_scalars))
        return buffer

    def update_info(self, key: str, value: Any, resumed: bool = True) -> None:
        """Set the runtime fact ``key`` (any object) to ``value``; ``resumed`` must be what it
        was for ``key`` before."""
        if not resumed or self._not_resumed:  # else nothing to check: one test per call
            self._check_resumed(key, resumed)
            if not resumed:
                self._not_resumed.add(key)
        self._runtime_info[key] = value

    def update_info_dict(self, info_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_info` for each item."""
        for key, value in info_dict.items():
            self.update_info(key, value, resumed)

    def _check_resumed(self, key: str, resumed: bool) -> None:
        """Refuse to update ``key`` with the other ``resumed`` than it was first given: it is
        saved in checkpoints or not for its whole life (MMEngine refuses the change too)."""
        was_resumed = key not in self._not_resumed
        if was_resumed == resumed:
            return
        if was_resumed and key not in self._log_scalars and key not in self._runtime_info:
            return  # a new key
        raise ValueAssertionError(
            f"message hub: {key!r} was recorded with resumed={was_resumed}, so it cannot be "
            f"updated with resumed={resumed}: a key is saved in checkpoints or not for its "
            "whole life (MMEngine refuses the change too); pass the same resumed= every time, "
            "or use another key"
        )

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
                key: _copy_of(key, value)
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
            if not isinstance(saved, dict):
                if not hasattr(saved, "data"):  # as MMEngine does: skipped, not fatal
                    _logger.warning("message hub: %r is not a scalar buffer, not resumed", key)
                    continue
                values, counts = saved.data
                saved = HistoryBuffer.from_history(values, counts, self.max_length).state_dict()
            self.scalar_buffer(key).load_state_dict(saved)  # in place: appenders stay valid
        for key, value in state_dict["runtime_info"].items():
            self._runtime_info[key] = _copy_of(key, value)
        for key, resumed in state_dict.get("resumed_keys", {}).items():
            if not resumed:
                self._not_resumed.add(key)


class ScalarRecorder:
    """Records scalars of one hub on every iteration for the price of a list append.

    The default hooks use it for 'train/lr', 'train/time', 'train/data_time' and the losses.
    What it records is what ``hub.update_scalar(key, value)`` would record, and readers see
    it as usual; only the checks are left to the caller::

        recorder = ScalarRecorder(runner.message_hub)
        append_time = recorder.appender('train/time')   # once
        append_time(0.012)          # per iteration: a float or a one-element torch.Tensor
        recorder.end_iteration()    # per iteration: now and then, limits what piles up unread

    Any other value goes through ``hub.update_scalar``. A hub that is not a runnerx
    :class:`MessageHub` (a test double, say) gets ``update_scalar`` calls for everything.
    """

    #: every this many iterations, values nobody read are folded in
    LIMIT_EVERY = 256

    def __init__(self, hub: Any) -> None:
        self.hub = hub
        self._buffers: list[HistoryBuffer] = []
        self._until_limit = self.LIMIT_EVERY

    def appender(self, key: str) -> Callable[[Any], None]:
        """A function recording one value of ``key`` (count 1); see the class docstring."""
        if not isinstance(self.hub, MessageHub):
            return partial(self.hub.update_scalar, key)
        buffer = self.hub.scalar_buffer(key)
        self._buffers.append(buffer)
        return buffer.appender()

    def end_iteration(self) -> None:
        """Count an iteration; every ``LIMIT_EVERY`` of them, :meth:`limit_unread`."""
        self._until_limit -= 1
        if not self._until_limit:
            self._until_limit = self.LIMIT_EVERY
            self.limit_unread()

    def limit_unread(self) -> None:
        """Let every buffer written through an appender fold its values in if they piled up
        (no hook reads them: no LoggerHook); does nothing otherwise."""
        for buffer in self._buffers:
            buffer.limit_unread()


def _copy_of(key: str, value: Any) -> Any:
    """A deep copy of ``value``; the value itself, with a warning, when it cannot be copied
    (MMEngine's behaviour: a runtime fact holding a lock or a handle does not stop a save)."""
    try:
        return copy.deepcopy(value)
    except Exception:
        _logger.warning("message hub: runtime info %r cannot be copied; using it as it is", key)
        return value


def _missing_key_message(kind: str, key: str, known: dict) -> str:
    hint = did_you_mean(key, known, form=SENTENCE)
    return f"no {kind} {key!r} in the message hub.{hint} Known keys: {sorted(known) or 'none'}"
