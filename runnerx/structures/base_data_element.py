"""BaseDataElement: one sample's annotations or predictions as named fields (MMEngine's):
**metainfo** fields describe the sample (``img_shape``, ``sample_idx``), **data** fields hold
what a model predicts or learns from (``pred_score``, ``gt_label``)::

    sample = BaseDataElement(metainfo=dict(img_shape=(8, 8)), gt_label=torch.tensor(3))
    sample.pred_score = scores      # data fields are set as attributes, metainfo by set_metainfo
    sample.img_shape, sample.to('cuda'), sample.to_dict()
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, MutableSet
from typing import Any

import numpy as np
import torch

from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

#: The two sets of field names; neither can be set as a field nor replaced once set.
_PRIVATE = ("_metainfo_fields", "_data_fields")
_MISSING = object()


class _FieldNames(MutableSet):
    """A set of field names that iterates in insertion order, so keys, ``to_dict`` and the
    repr list fields in the order they were set (MMEngine's plain set varies between runs)."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names = dict.fromkeys(names)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def add(self, name: str) -> None:
        self._names[name] = None

    def discard(self, name: str) -> None:
        self._names.pop(name, None)

    def __repr__(self) -> str:
        return "{" + ", ".join(map(repr, self._names)) + "}"


def _private_error(name: str) -> AttributeError:
    return AttributeError(f"{name} is private to data elements: it cannot be set or deleted")


def _is_tensor_like(value: Any) -> bool:
    return isinstance(value, (torch.Tensor, BaseDataElement))


class BaseDataElement:
    """Named metainfo and data fields of one sample, with dict-like and tensor-like methods;
    the base of ``InstanceData``, ``LabelData``, ``PixelData`` and of task data samples.

    A subclass may expose a typed field through a property that stores it under ``'_' +
    name`` with ``set_field(value, '_' + name, dtype=...)``, as MMDetection's data samples do;
    ``keys()`` then lists the property's name, not the private one.

    Equality is identity (``==`` compares objects, not fields), as in MMEngine.

    Args:
        metainfo: metainfo fields (deep-copied), e.g. ``dict(img_shape=(224, 224))``.
        kwargs: data fields.
    """

    def __init__(self, *, metainfo: dict | None = None, **kwargs: Any) -> None:
        object.__setattr__(self, "_metainfo_fields", _FieldNames())
        object.__setattr__(self, "_data_fields", _FieldNames())
        if metainfo is not None:
            self.set_metainfo(metainfo)
        if kwargs:
            self.set_data(kwargs)

    # ----- setting and deleting fields
    def set_metainfo(self, metainfo: dict) -> None:
        """Add or change metainfo fields (the values are deep-copied)."""
        if not isinstance(metainfo, dict):
            raise TypeAssertionError(
                f"metainfo must be a dict, but got {type(metainfo).__name__}: {metainfo!r}"
            )
        for name, value in copy.deepcopy(metainfo).items():
            self.set_field(value, name, field_type="metainfo")

    def set_data(self, data: dict) -> None:
        """Add or change data fields, as ``setattr`` would (so properties' setters run)."""
        if not isinstance(data, dict):
            raise TypeAssertionError(f"data must be a dict, but got {type(data).__name__}")
        for name, value in data.items():
            setattr(self, name, value)

    def set_field(
        self,
        value: Any,
        name: str,
        dtype: type | tuple[type, ...] | None = None,
        field_type: str = "data",
    ) -> None:
        """Set field ``name`` of kind ``field_type`` ('data' or 'metainfo') to ``value``,
        checking it is a ``dtype`` when one is given (for properties' setters)."""
        if field_type not in ("metainfo", "data"):
            raise ValueAssertionError(
                f"field_type must be 'metainfo' or 'data', but got {field_type!r}"
            )
        if dtype is not None and not isinstance(value, dtype):
            expected = " or ".join(
                t.__name__ for t in (dtype if isinstance(dtype, tuple) else [dtype])
            )
            raise TypeAssertionError(
                f"{type(self).__name__}.{name} must be a {expected}, but got {type(value).__name__}"
            )
        if name in _PRIVATE:
            raise _private_error(name)
        is_meta = field_type == "metainfo"
        if name in (self._data_fields if is_meta else self._metainfo_fields):
            hint = f"del element.{name} first" if is_meta else "set_metainfo changes it"
            raise AttributeError(
                f"cannot set {name!r} as a {field_type} field of this {type(self).__name__}: "
                f"it is already a {'data' if is_meta else 'metainfo'} field ({hint})"
            )
        object.__setattr__(self, name, value)
        (self._metainfo_fields if is_meta else self._data_fields).add(name)

    def __setattr__(self, name: str, value: Any) -> None:
        """``element.name = value`` sets a data field."""
        if name in _PRIVATE:
            if name in self.__dict__:
                raise _private_error(name)
            object.__setattr__(self, name, value)
        else:
            self.set_field(value, name)

    def __delattr__(self, name: str) -> None:
        """``del element.name`` removes a data or metainfo field."""
        if name in _PRIVATE:
            raise _private_error(name)
        object.__delattr__(self, name)
        self._metainfo_fields.discard(name)
        self._data_fields.discard(name)

    __delitem__ = __delattr__

    def update(self, instance: BaseDataElement) -> None:
        """Add or change this element's fields with those of ``instance``."""
        if not isinstance(instance, BaseDataElement):
            raise TypeAssertionError(
                f"update() takes a BaseDataElement, but got {type(instance).__name__}"
            )
        self.set_metainfo(dict(instance.metainfo_items()))
        self.set_data(dict(instance.items()))

    # ----- dict-like access
    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key`` (or a property of that name), else ``default``."""
        return getattr(self, key, default)

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        """Remove the field ``key`` and return its value; ``default`` if there is none, or a
        KeyError without one. (MMEngine raised a KeyError for a field behind a property.)"""
        if key in self._metainfo_fields or key in self._data_fields:
            value = getattr(self, key)
            delattr(self, key)
            return value
        if default is not _MISSING:
            return default
        raise KeyError(
            f"{key!r} is not a field of this {type(self).__name__}; its fields are "
            f"{self.all_keys()}"
        )

    def __contains__(self, key: str) -> bool:
        return key in self._data_fields or key in self._metainfo_fields

    def keys(self) -> list[str]:
        """The names of the data fields (a property's name, not the ``'_' + name`` it
        stores its value under)."""
        fields, cls = self._data_fields, type(self)
        hidden = {"_" + name for name in fields if isinstance(getattr(cls, name, None), property)}
        return [name for name in fields if name not in hidden]

    def metainfo_keys(self) -> list[str]:
        """The names of the metainfo fields."""
        return list(self._metainfo_fields)

    def all_keys(self) -> list[str]:
        """Metainfo then data field names."""
        return self.metainfo_keys() + self.keys()

    def values(self) -> list:
        """The values of the data fields."""
        return [getattr(self, name) for name in self.keys()]

    def metainfo_values(self) -> list:
        """The values of the metainfo fields."""
        return [getattr(self, name) for name in self._metainfo_fields]

    def all_values(self) -> list:
        """Metainfo then data field values."""
        return self.metainfo_values() + self.values()

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of every data field."""
        for name in self.keys():
            yield name, getattr(self, name)

    def metainfo_items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of every metainfo field."""
        for name in self.metainfo_keys():
            yield name, getattr(self, name)

    def all_items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of every metainfo then data field."""
        yield from self.metainfo_items()
        yield from self.items()

    @property
    def metainfo(self) -> dict:
        """The metainfo fields as a new dict."""
        return dict(self.metainfo_items())

    # ----- copies
    def new(self, *, metainfo: dict | None = None, **kwargs: Any) -> BaseDataElement:
        """An element of the same type with ``metainfo`` (else a deep copy of this one's) and
        the data ``kwargs`` (else this one's data values, not copied)."""
        element = type(self)()
        element.set_metainfo(self.metainfo if metainfo is None else metainfo)
        element.set_data(kwargs if kwargs else dict(self.items()))
        return element

    def __copy__(self) -> BaseDataElement:
        """A shallow copy with field-name sets of its own, so a field set on the copy is not
        listed by the original (MMEngine's copies share them)."""
        element = type(self).__new__(type(self))
        element.__dict__.update(self.__dict__)
        object.__setattr__(element, "_metainfo_fields", _FieldNames(self._metainfo_fields))
        object.__setattr__(element, "_data_fields", _FieldNames(self._data_fields))
        return element

    def clone(self) -> BaseDataElement:
        """A new element with a deep copy of the metainfo and the same data values, as
        MMEngine's ``clone`` (tensors are shared: use ``copy.deepcopy`` to copy them too)."""
        return self.new()

    # ----- tensor-like methods: each returns a new element, this one is unchanged
    def _map_data(
        self, convert: Callable[[Any], Any], applies: Callable[[Any], bool]
    ) -> BaseDataElement:
        """A new element whose data values for which ``applies`` is true are converted."""
        return self.new(**{k: convert(v) if applies(v) else v for k, v in self.items()})

    def _call_on_tensors(self, method: str) -> BaseDataElement:
        return self._map_data(lambda value: getattr(value, method)(), _is_tensor_like)

    def to(self, *args: Any, **kwargs: Any) -> BaseDataElement:
        """Call ``.to(*args, **kwargs)`` on every data value that has a ``to`` method
        (tensors, nested elements): ``element.to('cuda', non_blocking=True)``."""
        return self._map_data(
            lambda value: value.to(*args, **kwargs), lambda value: hasattr(value, "to")
        )

    def cpu(self) -> BaseDataElement:
        """Tensors (and nested elements) moved to the CPU."""
        return self._call_on_tensors("cpu")

    def cuda(self) -> BaseDataElement:
        """Tensors (and nested elements) moved to the current CUDA device."""
        return self._call_on_tensors("cuda")

    def npu(self) -> BaseDataElement:
        """Tensors moved to an Ascend NPU (needs torch_npu)."""
        return self._call_on_tensors("npu")

    def mlu(self) -> BaseDataElement:
        """Tensors moved to a Cambricon MLU (needs torch_mlu)."""
        return self._call_on_tensors("mlu")

    def musa(self) -> BaseDataElement:
        """Tensors moved to a Moore Threads GPU (needs torch_musa)."""
        return self._call_on_tensors("musa")

    def detach(self) -> BaseDataElement:
        """Tensors (and nested elements) detached from the autograd graph."""
        return self._call_on_tensors("detach")

    def numpy(self) -> BaseDataElement:
        """Tensors (and nested elements) as numpy arrays, detached and on the CPU."""
        return self._map_data(lambda value: value.detach().cpu().numpy(), _is_tensor_like)

    def to_tensor(self) -> BaseDataElement:
        """Numpy arrays (and nested elements') as tensors sharing their memory."""
        return self._map_data(
            lambda value: (
                torch.from_numpy(value) if isinstance(value, np.ndarray) else value.to_tensor()
            ),
            lambda value: isinstance(value, (np.ndarray, BaseDataElement)),
        )

    def to_dict(self) -> dict:
        """Metainfo and data fields in one dict, nested elements as dicts too: what the
        Evaluator hands to metrics."""
        return {
            name: value.to_dict() if isinstance(value, BaseDataElement) else value
            for name, value in self.all_items()
        }

    def __repr__(self) -> str:
        """MMEngine's layout: a blank line before each section, one field a line, a dict
        value's items and a nested element's lines indented one level deeper."""
        body = ""
        for title, fields in (
            ("META INFORMATION", dict(self.metainfo_items())),
            ("DATA FIELDS", dict(self.items())),
        ):
            body += f"\n\n    {title}" + _indent(_dump_fields(fields))
        return f"<{type(self).__name__}({body}\n) at {hex(id(self))}>"


def _indent(text: str) -> str:
    """``text`` with every line after its first indented by four spaces."""
    return text.replace("\n", "\n    ")


def _dump_fields(fields: dict) -> str:
    """One ``\\nname: value`` line per field, a dict value as its own indented fields."""
    return "".join(
        f"\n{name}: " + _indent(_dump_fields(value) if isinstance(value, dict) else repr(value))
        for name, value in fields.items()
    )
