"""YamlHandler: YAML files (PyYAML, imported when a file is read or written), read safely."""

from __future__ import annotations

import functools
from typing import IO, Any

from .base import BaseFileHandler, name_of

__all__ = ["YamlHandler"]


class YamlHandler(BaseFileHandler):
    """YAML (PyYAML): read safely, written with PyYAML's ``Dumper`` as MMEngine writes it."""

    def load_from_fileobj(self, file: IO, unsafe_load: bool = False, **kwargs: Any) -> Any:
        """The YAML document in ``file``, built from plain data only unless ``unsafe_load``
        (or an explicit ``Loader=``); a ``ValueError`` names the file of an invalid document
        or of a tag the safe loader refuses."""
        yaml = _import_yaml(f"reading {name_of(file)}")
        if unsafe_load:
            kwargs.setdefault("Loader", getattr(yaml, "CLoader", yaml.Loader))
        kwargs.setdefault("Loader", plain_data_loader())
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


@functools.cache
def plain_data_loader() -> type:
    """PyYAML's safe loader class (the C one when built) that also builds ``!!python/tuple``:
    what :func:`runnerx.fileio.load` and YAML configs read with."""
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
