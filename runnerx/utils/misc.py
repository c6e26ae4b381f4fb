"""MMEngine's small helpers: type checks on sequences, casts, n-tuples, list slicing,
``apply_to`` on nested data, method checks and import by name.

.. code-block:: python

    from runnerx.utils import is_list_of, to_2tuple, apply_to

    is_list_of(['a', 'b'], str)          # True
    to_2tuple(3)                          # (3, 3)
    apply_to({'x': [1, 2.5]}, lambda v: isinstance(v, float), round)   # {'x': [1, 2]}
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from importlib import import_module
from types import ModuleType
from typing import Any

from runnerx.config.custom_imports import import_modules_from_strings

# MMEngine defines these in mmengine.utils.misc: code importing them from there finds them
from runnerx.utils.deprecation import deprecated_api_warning, deprecated_function
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError
from runnerx.utils.package_utils import check_prerequisites, requires_executable, requires_package

__all__ = [
    "apply_to",
    "check_prerequisites",
    "concat_list",
    "deprecated_api_warning",
    "deprecated_function",
    "get_object_from_string",
    "has_method",
    "import_modules_from_strings",
    "is_list_of",
    "is_method_overridden",
    "is_seq_of",
    "is_str",
    "is_tuple_of",
    "iter_cast",
    "list_cast",
    "requires_executable",
    "requires_package",
    "slice_list",
    "to_1tuple",
    "to_2tuple",
    "to_3tuple",
    "to_4tuple",
    "to_ntuple",
    "tuple_cast",
]


def to_ntuple(n: int) -> Callable[[Any], Any]:
    """A function that repeats a single value ``n`` times into a tuple and returns an
    iterable (a str too) unchanged, e.g. for a ``kernel_size`` that is ``3`` or ``(3, 5)``."""

    def repeat(x: Any) -> Any:
        return x if isinstance(x, Iterable) else (x,) * n

    return repeat


to_1tuple = to_ntuple(1)
to_2tuple = to_ntuple(2)
to_3tuple = to_ntuple(3)
to_4tuple = to_ntuple(4)


def is_str(x: Any) -> bool:
    """Whether ``x`` is a str (kept for MMEngine code; ``isinstance(x, str)`` says the same)."""
    return isinstance(x, str)


def iter_cast(inputs: Iterable, dst_type: type, return_type: type | None = None) -> Any:
    """Each item of ``inputs`` converted by ``dst_type``: an iterator, or a ``return_type``
    (``list``, ``tuple``, ...) holding them."""
    if not isinstance(inputs, Iterable):
        raise TypeError(f"iter_cast: inputs must be iterable, got {type(inputs).__name__}")
    if not isinstance(dst_type, type):
        raise TypeError(f"iter_cast: dst_type must be a type, got {dst_type!r}")
    converted = map(dst_type, inputs)
    return converted if return_type is None else return_type(converted)


def list_cast(inputs: Iterable, dst_type: type) -> list:
    """:func:`iter_cast` into a list."""
    return iter_cast(inputs, dst_type, return_type=list)


def tuple_cast(inputs: Iterable, dst_type: type) -> tuple:
    """:func:`iter_cast` into a tuple."""
    return iter_cast(inputs, dst_type, return_type=tuple)


def is_seq_of(
    seq: Any, expected_type: type | tuple[type, ...], seq_type: type | None = None
) -> bool:
    """Whether ``seq`` is a ``seq_type`` (any Sequence when None) whose items are all
    ``expected_type`` (a type or a tuple of types); an empty sequence qualifies."""
    if seq_type is None:
        seq_type = Sequence
    elif not isinstance(seq_type, type):
        raise TypeAssertionError(f"is_seq_of: seq_type must be a type, got {seq_type!r}")
    return isinstance(seq, seq_type) and all(isinstance(item, expected_type) for item in seq)


def is_list_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a list whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=list)


def is_tuple_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a tuple whose items are all ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=tuple)


def slice_list(in_list: Sequence, lens: int | list[int]) -> list:
    """``in_list`` cut into consecutive pieces of the lengths ``lens`` (or into pieces of
    ``lens`` items each when it is an int, which must divide the length)."""
    if isinstance(lens, int):
        if lens <= 0 or len(in_list) % lens:
            raise ValueAssertionError(
                f"slice_list: lens={lens} does not divide a list of {len(in_list)} items"
            )
        lens = [lens] * (len(in_list) // lens)
    if not isinstance(lens, list):
        raise TypeError(f"slice_list: lens must be an int or a list of ints, got {lens!r}")
    if sum(lens) != len(in_list):
        raise ValueError(
            f"slice_list: the lengths add up to {sum(lens)}, the list has {len(in_list)} items"
        )
    bounds = itertools.accumulate(lens, initial=0)
    return [in_list[start:end] for start, end in itertools.pairwise(bounds)]


def concat_list(in_list: Iterable[Iterable]) -> list:
    """The items of each iterable in ``in_list``, in one flat list."""
    return list(itertools.chain.from_iterable(in_list))


def apply_to(data: Any, expr: Callable[[Any], bool], apply_func: Callable[[Any], Any]) -> Any:
    """``data`` with ``apply_func(x)`` in place of every leaf ``x`` for which ``expr(x)``.

    Dicts, lists, tuples and namedtuples are walked and rebuilt with their own types:

    .. code-block:: python

        batch = apply_to(batch, lambda x: isinstance(x, np.ndarray), torch.from_numpy)
    """
    if isinstance(data, dict):
        rebuilt = type(data)()
        for key, value in data.items():
            rebuilt[key] = apply_to(value, expr, apply_func)
        return rebuilt
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(apply_to(item, expr, apply_func) for item in data))
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to(item, expr, apply_func) for item in data)
    return apply_func(data) if expr(data) else data


def is_method_overridden(method: str, base_class: type, derived_class: type | Any) -> bool:
    """Whether ``derived_class`` (a class or an instance of one) defines ``method`` other
    than ``base_class`` does, e.g. to see which hook points a Hook subclass implements."""
    if not isinstance(base_class, type):
        raise TypeAssertionError(
            f"is_method_overridden: base_class must be a class, got an instance {base_class!r}"
        )
    if not isinstance(derived_class, type):
        derived_class = type(derived_class)
    return getattr(derived_class, method) != getattr(base_class, method)


def has_method(obj: object, method: str) -> bool:
    """Whether ``obj`` has a callable attribute ``method``."""
    return callable(getattr(obj, method, None))


def get_object_from_string(obj_name: str) -> Any:
    """The module, class, function or attribute that the dotted ``obj_name`` names, or None
    when there is none.

    As in MMEngine, an attribute wins over a submodule of the same name (``'mmcv.ops.nms'`` is
    the function ``nms`` that ``mmcv.ops`` exports, not the module ``mmcv/ops/nms.py``):

    .. code-block:: python

        get_object_from_string('torch.optim.SGD')      # <class 'torch.optim.sgd.SGD'>
    """
    first, *rest = obj_name.split(".")
    module_name = first
    try:
        obj: Any = import_module(first)
    except ImportError:
        return None
    in_modules = True  # until the first attribute that is not a module
    for part in rest:
        attribute = getattr(obj, part, None)
        if in_modules and (attribute is None or isinstance(attribute, ModuleType)):
            module_name = f"{module_name}.{part}"
            try:
                obj = import_module(module_name)
            except ImportError:
                return None
        elif attribute is None:
            return None
        else:
            in_modules = False
            obj = attribute
    return obj


def merge_dict(*args: dict) -> dict:
    """One dict with the items of every argument, later ones winning (``mmengine.model``'s
    ``merge_dict``, which model code uses instead of ``dict.update``)."""
    merged: dict = {}
    for index, item in enumerate(args):
        if not isinstance(item, dict):
            raise TypeAssertionError(
                f"merge_dict: every argument must be a dict, but argument {index} is "
                f"{type(item).__name__}"
            )
        merged.update(item)
    return merged
