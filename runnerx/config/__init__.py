"""Config files: reading, inheritance (``_base_``), command-line overrides, printing, dumping."""

from .config import Config
from .config_dict import ConfigDict, MissingKeyAttributeError, MissingKeyError, config_key_path
from .custom_imports import import_modules_from_strings
from .dict_action import DictAction, parse_option_value
from .errors import (
    ConfigError,
    ConfigFileNotFoundError,
    ConfigFormatError,
    ConfigKeyError,
    ConfigParsingError,
    ConfigSyntaxError,
    ConfigTypeError,
    DuplicateBaseKeyError,
    InheritanceCycleError,
    MissingBaseVariableError,
    MissingEnvVariableError,
)
from .provenance import Explanation, Origin
from .read_base import read_base

__all__ = [
    "Config",
    "ConfigDict",
    "ConfigError",
    "ConfigFileNotFoundError",
    "ConfigFormatError",
    "ConfigKeyError",
    "ConfigParsingError",
    "ConfigSyntaxError",
    "ConfigTypeError",
    "DictAction",
    "DuplicateBaseKeyError",
    "Explanation",
    "InheritanceCycleError",
    "MissingBaseVariableError",
    "MissingEnvVariableError",
    "MissingKeyAttributeError",
    "MissingKeyError",
    "Origin",
    "config_key_path",
    "import_modules_from_strings",
    "parse_option_value",
    "read_base",
]
