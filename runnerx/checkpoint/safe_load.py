"""Loading checkpoints without running pickled code.

``torch.load(weights_only=True)`` rebuilds tensors and plain containers (dict, list, tuple,
str, numbers) and nothing else. Checkpoints also hold a few other objects that are safe to
rebuild, which :func:`checkpoint_safe_globals` allows by name:

- numpy arrays, dtypes and scalars (RNG states, metrics a user logged as numpy values);
- runnerx's ``ConfigDict`` (a config value that ended up in the runtime info);
- what MMEngine checkpoints contain (see :mod:`runnerx.checkpoint.mmengine_compat`).

Anything else refuses to load with :class:`UnsafeCheckpointError`, which names the objects
and the opt-in for trusted files (``unsafe_load=True``).
"""

from __future__ import annotations

import contextlib
import functools
import pickle
from typing import Any

import torch

from runnerx.fileio.plain_pickle import numpy_safe_globals

from .mmengine_compat import MMENGINE_SAFE_GLOBALS

#: How to opt in, quoted by the error (the same words as docs/checkpoint.md).
OPT_IN = (
    "load_checkpoint(path, unsafe_load=True), `unsafe_load = True` at the top level of the "
    "config, or --unsafe-load for tools/train.py, tools/test.py and tools/publish_model.py"
)


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holds pickled objects that a safe load does not rebuild.

    ``names`` lists them as the pickle refers to them (``'builtins.eval'``,
    ``'my_pkg.models.MyNet'``); nothing in the file was run.
    """

    def __init__(self, path: str, names: list[str], detail: str) -> None:
        self.path = path
        self.names = names
        found = f"pickled objects that a safe load does not allow: {', '.join(names)}"
        super().__init__(
            f"refused to load the checkpoint {path}: it holds {found if names else detail}. "
            f"Nothing in it was run. If you trust this file, load it with {OPT_IN}."
        )


@functools.cache
def checkpoint_safe_globals() -> tuple[tuple[Any, str], ...]:
    """``(object, pickled name)`` pairs a safe load may rebuild besides torch's own (empty on
    torch < 2.6, which cannot allow objects under a name of our choosing)."""
    if not _torch_accepts_named_globals():
        return ()
    from runnerx.config.config_dict import ConfigDict

    return (
        (ConfigDict, "runnerx.config.config_dict.ConfigDict"),
        *numpy_safe_globals(),
        *MMENGINE_SAFE_GLOBALS,
    )


def load_weights_only(path: str, map_location: Any) -> Any:
    """``torch.load(path, weights_only=True)`` with :func:`checkpoint_safe_globals` allowed;
    :class:`UnsafeCheckpointError` names whatever else the file holds."""
    allowed = checkpoint_safe_globals()
    allow = torch.serialization.safe_globals(list(allowed)) if allowed else contextlib.nullcontext()
    try:
        with allow:
            return torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as error:
        names = _refused_globals(path, {name for _, name in allowed})
        raise UnsafeCheckpointError(path, names, _torch_reason(str(error))) from None


def _refused_globals(path: str, allowed_names: set[str]) -> list[str]:
    """The objects ``path`` refers to that neither torch nor we allow (sorted)."""
    finder = getattr(torch.serialization, "get_unsafe_globals_in_checkpoint", None)
    if finder is None:
        return []
    try:
        return sorted(set(finder(path)) - allowed_names)
    except (ValueError, RuntimeError, pickle.UnpicklingError):
        return []  # not a zip checkpoint: torch's own reason says what was refused


def _torch_reason(message: str) -> str:
    """The part of torch's weights-only error that says what it refused."""
    marker = "WeightsUnpickler error: "
    if marker in message:
        return message.split(marker, 1)[1].split("\n", 1)[0]
    return message.strip().splitlines()[-1] if message.strip() else "an unsupported object"


def _torch_accepts_named_globals() -> bool:
    """Whether ``torch.serialization.safe_globals`` takes ``(object, name)`` pairs (2.6+)."""
    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    return (major, minor) >= (2, 6) and hasattr(torch.serialization, "safe_globals")
