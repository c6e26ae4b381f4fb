"""File handlers: how ``load`` and ``dump`` read and write each format (MMEngine's
``BaseFileHandler`` API), the built-in JSON, YAML and pickle handlers, and
``register_handler`` to add a format.

The built-in handlers read safely: JSON builds only plain data; YAML is read with a safe
loader (PyYAML's safe loader, plus tuples, which ``yaml.dump`` writes as ``!!python/tuple``);
a pickle rebuilds only plain data (:mod:`runnerx.fileio.plain_pickle`). ``unsafe_load=True``
gives MMEngine's loaders (``pickle.load``, PyYAML's full ``Loader``) for trusted files.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import sys
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from typing import IO, Any

from .atomic import atomic_write
from .plain_pickle import load_plain_pickle


class BaseFileHandler(metaclass=ABCMeta):
    """How one file format is read and written (subclass it and :func:`register_handler` it
    to add a format). ``str_like`` says whether the format is text (``True``) or bytes.

    .. code-block:: python

        @register_handler('txt')
        class TxtHandler(BaseFileHandler):
            def load_from_fileobj(self, file, **kwargs):
                return file.read()

            def dump_to_fileobj(self, obj, file, **kwargs):
                file.write(str(obj))

            def dump_to_str(self, obj, **kwargs):
                return str(obj)
    """

    str_like = True

    @abstractmethod
    def load_from_fileobj(self, file: IO, **kwargs: Any) -> Any:
        """The object read from an open file."""

    @abstractmethod
    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """Write ``obj`` to an open file."""

    @abstractmethod
    def dump_to_str(self, obj: Any, **kwargs: Any) -> str | bytes:
        """``obj`` as this format's text (or bytes, for a bytes format)."""

    def load_from_path(
        self, filepath: str | os.PathLike, mode: str | None = None, **kwargs: Any
    ) -> Any:
        """The object read from a file (text formats are read as UTF-8)."""
        mode = mode or ("r" if self.str_like else "rb")
        with open(filepath, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as file:
            return self.load_from_fileobj(file, **kwargs)

    def dump_to_path(
        self, obj: Any, filepath: str | os.PathLike, mode: str | None = None, **kwargs: Any
    ) -> None:
        """Write ``obj`` to a file atomically: a failure leaves the old file as it was."""
        binary = "b" in mode if mode else not self.str_like
        with atomic_write(filepath, binary=binary) as file:
            self.dump_to_fileobj(obj, file, **kwargs)


class JsonHandler(BaseFileHandler):
    """JSON; dumps sets, ranges and numpy arrays and scalars as lists and numbers."""

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """``json.load`` (always safe: ``unsafe_load`` changes nothing); a ``ValueError`` names
        the file and line of a syntax error."""
        try:
            return json.load(file, **kwargs)
        except json.JSONDecodeError as error:
            raise ValueError(f"{name_of(file)}:{error.lineno}: invalid JSON: {error.msg}") from None

    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """``json.dump`` with :func:`json_default` for what JSON lacks."""
        json.dump(obj, file, **{"default": json_default, **kwargs})

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        """``json.dumps`` with :func:`json_default` for what JSON lacks."""
        return json.dumps(obj, **{"default": json_default, **kwargs})


def json_default(obj: Any) -> Any:
    """A set or range as a list, a numpy array as a (nested) list, a numpy scalar as a number."""
    if isinstance(obj, (set, range)):
        return list(obj)
    numpy = sys.modules.get("numpy")  # a numpy value exists only once numpy is imported
    if numpy is not None and isinstance(obj, (numpy.ndarray, numpy.generic)):
        return obj.tolist()
    raise TypeError(
        f"{type(obj).__qualname__} cannot be written as JSON (JSON holds dicts, lists, "
        "strings, numbers, booleans and None; sets, ranges and numpy values are converted): "
        "convert it first, or dump as pickle"
    )


class YamlHandler(BaseFileHandler):
    """YAML (PyYAML): read safely, written with PyYAML's ``Dumper`` as MMEngine writes it."""

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """The YAML document in ``file``, built from plain data only unless ``unsafe_load``
        (or an explicit ``Loader=``); a ``ValueError`` names the file of an invalid document
        or of a tag the safe loader refuses."""
        yaml = _import_yaml(f"reading {name_of(file)}")
        if unsafe_load:
            kwargs.setdefault("Loader", getattr(yaml, "CLoader", yaml.Loader))
        kwargs.setdefault("Loader", _plain_data_loader())
        try:
            return yaml.load(file, **kwargs)
        except yaml.constructor.ConstructorError as error:
            if not str(error.problem).startswith("could not determine a constructor"):
                raise ValueError(f"{name_of(file)}: invalid YAML: {error}") from None
            raise ValueError(
                f"refused to load {name_of(file)}: {error.problem} ({error.problem_mark}); only "
                "plain data (maps, lists, strings, numbers, tuples) is built, since Python tags "
                "can run code. Nothing in it was run. If you trust the file, load it with "
                "runnerx.fileio.load(file, unsafe_load=True)."
            ) from None
        except yaml.YAMLError as error:
            raise ValueError(f"{name_of(file)}: invalid YAML: {error}") from None

    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """``yaml.dump`` to ``file``."""
        yaml = _import_yaml("writing YAML")
        yaml.dump(obj, file, **{"Dumper": getattr(yaml, "CDumper", yaml.Dumper), **kwargs})

    def dump_to_str(self, obj: Any, **kwargs: Any) -> str:
        """``yaml.dump`` to a str."""
        yaml = _import_yaml("writing YAML")
        return yaml.dump(obj, **{"Dumper": getattr(yaml, "CDumper", yaml.Dumper), **kwargs})


class PickleHandler(BaseFileHandler):
    """Pickle: read as plain data unless ``unsafe_load``; written with protocol 2 (MMEngine's
    default) unless ``protocol=`` is given."""

    str_like = False

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """The pickled object; anything but plain data is refused (see
        :mod:`runnerx.fileio.plain_pickle`) unless ``unsafe_load``."""
        if unsafe_load:
            return pickle.load(file, **kwargs)
        return load_plain_pickle(file, name_of(file), **kwargs)

    def dump_to_fileobj(self, obj: Any, file: IO, **kwargs: Any) -> None:
        """``pickle.dump`` to ``file``."""
        pickle.dump(obj, file, **{"protocol": 2, **kwargs})

    def dump_to_str(self, obj: Any, **kwargs: Any) -> bytes:
        """``pickle.dumps`` (bytes, as MMEngine's)."""
        return pickle.dumps(obj, **{"protocol": 2, **kwargs})


#: The handler of each format name (a file's suffix, or ``file_format``).
file_handlers: dict[str, BaseFileHandler] = {
    "json": JsonHandler(),
    "yaml": YamlHandler(),
    "yml": YamlHandler(),
    "pickle": PickleHandler(),
    "pkl": PickleHandler(),
}


def register_handler(file_formats: str | list[str], **kwargs: Any) -> Callable[[type], type]:
    """A class decorator that makes ``load`` and ``dump`` use an instance of the class (built
    with ``kwargs``) for the formats ``file_formats`` (names without the dot)."""
    formats = [file_formats] if isinstance(file_formats, str) else file_formats
    if not isinstance(formats, list) or not all(isinstance(name, str) for name in formats):
        raise TypeError(f"file_formats must be a str or a list of str, not {file_formats!r}")

    def register(cls: type) -> type:
        if not (isinstance(cls, type) and issubclass(cls, BaseFileHandler)):
            raise TypeError(f"register_handler: {cls!r} is not a subclass of BaseFileHandler")
        handler = cls(**kwargs)
        for name in formats:
            file_handlers[name] = handler
        return cls

    return register


def infer_format(path: str) -> str:
    """The format a path's suffix names, lower-cased (``'json'`` for ``'a/b.JSON'``), or
    ``''`` if its name has no dot."""
    name = os.path.basename(path)
    return name.rsplit(".", 1)[1].lower() if "." in name else ""


def handler_for(file_format: str, where: str) -> BaseFileHandler:
    """The handler of ``file_format``; a ``TypeError`` naming ``where`` and the known formats
    if there is none."""
    handler = file_handlers.get(file_format)
    if handler is None:
        raise TypeError(
            f"{where}: unsupported format {file_format!r}; the formats known are "
            f"{', '.join(file_handlers)} (give file_format=..., or add a format with "
            "runnerx.fileio.register_handler)"
        )
    return handler


def name_of(file: IO) -> str:
    """How error messages name an open file: its path, or 'the file object'."""
    name = getattr(file, "name", None)
    return name if isinstance(name, str) else "the file object"


@functools.cache
def _plain_data_loader() -> type:
    yaml = _import_yaml("reading YAML")
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class PlainDataLoader(base):
        """PyYAML's safe loader, plus ``!!python/tuple`` (plain data ``yaml.dump`` writes)."""

    PlainDataLoader.add_constructor(
        "tag:yaml.org,2002:python/tuple",
        lambda loader, node: tuple(loader.construct_sequence(node)),
    )
    return PlainDataLoader


def _import_yaml(doing: str) -> Any:
    try:
        import yaml
    except ImportError:
        raise ImportError(f"{doing} needs PyYAML: pip install pyyaml") from None
    return yaml
