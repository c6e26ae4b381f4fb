"""Reading pickles without running code: only plain data (containers, numbers, strings,
bytes, numpy arrays, CPU torch tensors) is rebuilt, and a pickle naming anything else is
refused before any of it is built. ``load`` reads pickles this way unless told
``unsafe_load=True``."""

from __future__ import annotations

import _codecs
import _compat_pickle
import collections
import functools
import io
import pickle
from typing import IO, Any

#: How to load a trusted pickle that holds other objects, quoted by :class:`UnsafePickleError`.
OPT_IN = "load it with runnerx.fileio.load(file, unsafe_load=True)"


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle names an object that a safe load does not rebuild.

    ``where`` is the file as the message names it, ``name`` the refused object as the pickle
    names it (``'posix.system'``, ``'my_pkg.Box'``); nothing in the file was run.
    """

    def __init__(self, where: str, name: str, if_trusted: str = OPT_IN) -> None:
        self.where = where
        self.name = name
        super().__init__(
            f"refused to load {where}: it holds a pickled {name}, and only plain data (dicts, "
            "lists, numbers, strings, numpy arrays) is rebuilt, since other pickled objects "
            f"can run code. Nothing in it was run. If you trust the file, {if_trusted}."
        )


def load_plain_pickle(file: IO[bytes], where: str, **kwargs: Any) -> Any:
    """The plain data pickled in ``file`` (``kwargs`` go to :class:`pickle.Unpickler`);
    :class:`UnsafePickleError` naming ``where`` if it holds anything else."""
    allowed = _plain_data_globals()

    class PlainDataUnpickler(pickle.Unpickler):
        def find_class(self, module: str, name: str) -> Any:
            # protocols 0-2 (MMEngine dumps with 2) name Python 2's modules: __builtin__.set
            if (module, name) in _compat_pickle.NAME_MAPPING:
                module, name = _compat_pickle.NAME_MAPPING[(module, name)]
            module = _compat_pickle.IMPORT_MAPPING.get(module, module)
            found = allowed.get(f"{module}.{name}")
            if found is None and module.startswith("torch"):
                found = _tensor_globals().get(f"{module}.{name}")
            if found is None:
                raise UnsafePickleError(where, f"{module}.{name}")
            return found

    return PlainDataUnpickler(file, **kwargs).load()


@functools.cache
def _tensor_globals() -> dict[str, Any]:
    """What a pickled CPU tensor refers to (DumpResults' files hold them): torch's rebuild
    function and, in place of torch's ``_load_from_bytes`` (a full ``torch.load`` of the
    storage), one that reads the storage weights-only. torch is imported only here."""
    import torch

    def load_storage(data: bytes) -> Any:
        return torch.load(io.BytesIO(data), weights_only=True)

    return {
        "torch._utils._rebuild_tensor_v2": torch._utils._rebuild_tensor_v2,
        "torch.storage._load_from_bytes": load_storage,
    }


@functools.cache
def _plain_data_globals() -> dict[str, Any]:
    """What a pickle of plain data refers to by name, keyed by that name."""
    plain_types = (set, frozenset, complex, slice, range, bytearray, list, dict, tuple)
    allowed = {f"builtins.{kind.__name__}": kind for kind in plain_types}
    allowed.update(
        {
            "collections.OrderedDict": collections.OrderedDict,
            "collections.defaultdict": collections.defaultdict,
            "_codecs.encode": _codecs.encode,  # how protocol 2 (MMEngine's dump) writes bytes
        }
    )
    allowed.update({name: obj for obj, name in numpy_safe_globals()})
    try:  # numpy arrays pickled with protocol 5
        from numpy._core import numeric
    except ImportError:
        try:
            from numpy.core import numeric
        except ImportError:
            return allowed
    for package in ("numpy.core", "numpy._core"):
        allowed[f"{package}.numeric._frombuffer"] = numeric._frombuffer
    return allowed


def numpy_safe_globals() -> list[tuple[Any, str]]:
    """numpy's array, dtype and scalar rebuilders under the names numpy 1 and 2 pickle them
    as; nothing if numpy is not installed (then no checkpoint of ours holds numpy values)."""
    try:
        import numpy
    except ImportError:
        return []
    multiarray = _numpy_multiarray(numpy)
    pairs: list[tuple[Any, str]] = [(numpy.ndarray, "numpy.ndarray"), (numpy.dtype, "numpy.dtype")]
    for package in ("numpy.core", "numpy._core"):
        pairs.append((multiarray._reconstruct, f"{package}.multiarray._reconstruct"))
        pairs.append((multiarray.scalar, f"{package}.multiarray.scalar"))
    # a pickled dtype is rebuilt as numpy.dtype(...) and then given its state, which a safe load
    # allows for allowed types only: every concrete dtype class (Float64DType, ...)
    for code in numpy.typecodes["All"]:
        dtype_class = type(numpy.dtype(code))
        pairs.append((dtype_class, f"numpy.dtypes.{dtype_class.__name__}"))
    return pairs


def _numpy_multiarray(numpy: Any) -> Any:
    try:
        from numpy._core import multiarray  # numpy >= 2
    except ImportError:
        from numpy.core import multiarray
    return multiarray
