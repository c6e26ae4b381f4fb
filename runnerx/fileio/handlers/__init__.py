"""File handlers: how ``load`` and ``dump`` read and write each format (MMEngine's
``BaseFileHandler`` API), the built-in JSON, YAML and pickle handlers, and
``register_handler`` to add a format. The submodules carry MMEngine's file names (``base``,
``json_handler``, ``yaml_handler``, ``pickle_handler``, ``registry_utils``).

The built-in handlers read safely: JSON builds only plain data; YAML is read with a safe
loader (PyYAML's safe loader, plus tuples, which ``yaml.dump`` writes as ``!!python/tuple``);
a pickle rebuilds only plain data (:mod:`runnerx.fileio.plain_pickle`). ``unsafe_load=True``
gives MMEngine's loaders (``pickle.load``, PyYAML's full ``Loader``) for trusted files.
"""

from .base import BaseFileHandler
from .json_handler import JsonHandler
from .pickle_handler import PickleHandler
from .registry_utils import file_handlers, register_handler
from .yaml_handler import YamlHandler

__all__ = [
    "BaseFileHandler",
    "JsonHandler",
    "PickleHandler",
    "YamlHandler",
    "file_handlers",
    "register_handler",
]
