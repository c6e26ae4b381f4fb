"""Reading checkpoints that MMEngine wrote, without importing (or installing) MMEngine.

An MMEngine checkpoint has the layout runnerx uses (``meta``, ``state_dict``, ``optimizer``,
``param_schedulers``, ``message_hub``), but its message hub holds the logged history as
pickled ``mmengine.logging.history_buffer.HistoryBuffer`` objects: numpy arrays of values and
counts, plus references to the class's statistics methods written as
``getattr(HistoryBuffer, 'mean')``. A safe load builds :class:`MMEngineHistoryBuffer` for each
buffer instead (values and counts only) and answers those ``getattr`` references with a
name, so nothing of MMEngine is imported or run. :func:`convert_mmengine_message_hub` turns
such a message hub into runnerx's layout.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Mapping
from typing import Any

#: Where MMEngine's HistoryBuffer lives; the name its pickles refer to.
MMENGINE_HISTORY_BUFFER = "mmengine.logging.history_buffer.HistoryBuffer"
#: MMEngine's default HistoryBuffer length, for a pickle that does not record one.
_MMENGINE_MAX_LENGTH = 1_000_000


class MMEngineHistoryBuffer:
    """What a pickled MMEngine HistoryBuffer becomes in a safe load: its values and counts.

    ``data`` is ``(values, counts)`` as in MMEngine, so ``MessageHub.load_state_dict`` reads it.
    """

    max_length: int
    values: Any
    counts: Any

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict):
            raise pickle.UnpicklingError(
                f"an MMEngine HistoryBuffer's state must be a dict, got {type(state).__name__}"
            )
        self.max_length = int(state.get("max_length", _MMENGINE_MAX_LENGTH))
        self.values = state.get("_log_history", ())
        self.counts = state.get("_count_history", ())

    @property
    def data(self) -> tuple[Any, Any]:
        """The logged values and their counts (numpy arrays), oldest first."""
        return self.values, self.counts

    def __repr__(self) -> str:
        return f"MMEngineHistoryBuffer(kept={len(self.values)}, max_length={self.max_length})"


def statistics_method_reference(owner: Any, name: Any) -> str:
    """Stands in for ``builtins.getattr`` during a safe load: MMEngine pickles the statistics
    methods of its HistoryBuffer class as ``getattr(HistoryBuffer, name)``. Those become their
    dotted name (a string, never the attribute); any other ``getattr`` is refused."""
    if owner is MMEngineHistoryBuffer and isinstance(name, str):
        return f"{MMENGINE_HISTORY_BUFFER}.{name}"
    raise pickle.UnpicklingError(
        f"builtins.getattr({owner!r}, {name!r}) is not allowed in a safe load (only MMEngine's "
        "HistoryBuffer statistics methods are)"
    )


#: The names an MMEngine checkpoint's pickle refers to, and what a safe load builds for them.
MMENGINE_SAFE_GLOBALS: list[tuple[Any, str]] = [
    (MMEngineHistoryBuffer, MMENGINE_HISTORY_BUFFER),
    (statistics_method_reference, "builtins.getattr"),
]


def convert_mmengine_message_hub(state: Mapping, max_length: int = 10_000) -> dict:
    """A message hub ``state_dict`` as runnerx writes it, from MMEngine's (or runnerx's own,
    returned unchanged in content).

    Every MMEngine history buffer becomes a runnerx ``HistoryBuffer`` state that has seen all
    of its kept values (``mean()``/``min()``/``max()`` cover them; the newest ``max_length``
    stay for windowed statistics); numpy scalars in the runtime info become Python numbers::

        checkpoint = load_checkpoint('mmengine_run/epoch_12.pth')
        hub.load_state_dict(convert_mmengine_message_hub(checkpoint['message_hub']))
    """
    from runnerx.logging.history_buffer import HistoryBuffer

    scalars = {}
    for key, saved in state.get("log_scalars", {}).items():
        if isinstance(saved, Mapping):
            scalars[key] = dict(saved)
        else:
            values, counts = saved.data
            scalars[key] = HistoryBuffer.from_history(values, counts, max_length).state_dict()
    return {
        "log_scalars": scalars,
        "runtime_info": {
            key: _python_numbers(value) for key, value in state.get("runtime_info", {}).items()
        },
        "resumed_keys": dict(state.get("resumed_keys", {})),
    }


def is_mmengine_checkpoint(checkpoint: Mapping) -> bool:
    """Whether ``checkpoint`` was written by MMEngine (its ``meta`` names an MMEngine version)."""
    meta = checkpoint.get("meta")
    return isinstance(meta, Mapping) and "mmengine_version" in meta


def _python_numbers(value: Any) -> Any:
    """``value`` with numpy scalars (also inside lists, tuples and dicts) as Python numbers."""
    if isinstance(value, Mapping):
        return {key: _python_numbers(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_python_numbers(item) for item in value)
    numpy = sys.modules.get("numpy")  # without numpy loaded there are no numpy values
    if numpy is not None and isinstance(value, numpy.generic):
        return value.item()
    return value
