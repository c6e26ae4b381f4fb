"""Config: a whole training configuration, read from a file tree and changed from the CLI.

.. code-block:: python

    from runnerx import Config

    cfg = Config.fromfile('configs/digits_convnet.py')
    cfg.merge_from_dict({'optim_wrapper.optimizer.lr': 0.05, 'train_cfg.max_epochs': 3})
    print(cfg.optim_wrapper.optimizer.lr)          # 0.05
    print(cfg.explain('optim_wrapper.optimizer.lr'))  # which file and line set it, in order
    cfg.dump('work_dirs/x/config.py')
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import warnings
from typing import Any

from .auto_args import add_config_args
from .config_dict import ConfigDict, unshare
from .custom_imports import import_modules_from_strings
from .dict_action import DictAction
from .diff import config_diff
from .dump import dump_text, write_atomically
from .errors import ConfigKeyError, ConfigTypeError
from .loader import load_config_file
from .merge import merge_into, nest_dotted_keys
from .option_checks import check_options
from .pretty import format_config
from .provenance import Explanation, Override, explain
from .read_base import read_base

# the names MMEngine's mmengine.config.config offers
__all__ = ["Config", "ConfigDict", "DictAction", "add_args", "read_base"]

RESERVED_KEYS = ("filename", "text", "pretty_text", "env_variables")
_STATE = ("_cfg_dict", "_filename", "_text", "_env_variables", "_source", "_overrides")


class Config:
    """A config: its values (a :class:`ConfigDict`), the file it came from and its text.

    Values are reached by attribute or item (``cfg.model.type``, ``cfg['model']['type']``).
    Build one with :meth:`fromfile`, or from a dict: ``Config(dict(model=dict(type='Net')))``.
    ``format_python_code`` is accepted for MMEngine compatibility, as in :meth:`fromfile`.
    """

    def __init__(
        self,
        cfg_dict: dict | None = None,
        cfg_text: str | None = None,
        filename: str | os.PathLike | None = None,
        env_variables: dict | None = None,
        format_python_code: bool = True,
    ) -> None:
        if cfg_dict is None:
            cfg_dict = {}
        elif not isinstance(cfg_dict, dict):
            raise TypeError(f"cfg_dict must be a dict, got {type(cfg_dict).__name__}")
        for key in cfg_dict:
            if key in RESERVED_KEYS:
                raise ConfigKeyError(f"{key!r} is reserved for the Config object; rename that key")
        filename = os.fspath(filename) if filename is not None else None
        if cfg_text is None:
            cfg_text = ""
            if filename is not None and os.path.isfile(filename):
                with open(filename, encoding="utf-8") as file:
                    cfg_text = file.read()
        if not isinstance(cfg_dict, ConfigDict):
            cfg_dict = ConfigDict(cfg_dict)
        unshare(cfg_dict)
        state = (cfg_dict, filename, cfg_text, dict(env_variables or {}), None, [])
        self.__setstate__(state)

    @staticmethod
    def fromfile(
        filename: str | os.PathLike,
        use_predefined_variables: bool = True,
        import_custom_modules: bool = True,
        use_environment_variables: bool = True,
        lazy_import: bool | None = None,
        format_python_code: bool = True,
    ) -> Config:
        """Read a ``.py``/``.json``/``.yaml`` config and everything it inherits.

        ``custom_imports`` in the result is imported (so registrations run) unless
        ``import_custom_modules=False``. ``lazy_import`` is MMEngine's switch for the
        ``with read_base():`` style: None reads a ``.py`` file in that style when it has such a
        block or (as MMEngine) no ``_base_ = ...`` and an import from outside the standard
        library, True always, False never (a block is then an error). Imports are not lazy
        here: they run as the file is read. ``format_python_code`` is accepted for MMEngine
        compatibility; :attr:`pretty_text` is always formatted.
        """
        loaded = load_config_file(
            filename, use_predefined_variables, use_environment_variables, lazy_import
        )
        if import_custom_modules and loaded.cfg.get("custom_imports"):
            imports = loaded.cfg["custom_imports"]
            if not isinstance(imports, dict):
                raise ConfigTypeError(
                    f"{filename}: custom_imports must be dict(imports=[...], "
                    f"allow_failed_imports=False), got {imports!r}"
                )
            import_modules_from_strings(**imports)
        text = "\n".join(f"{src.path}\n{src.text}" for src in loaded.source.in_merge_order())
        cfg = Config(
            loaded.cfg, cfg_text=text, filename=filename, env_variables=loaded.env_variables
        )
        object.__setattr__(cfg, "_source", loaded.source)
        return cfg

    @staticmethod
    def fromstring(cfg_str: str, file_format: str) -> Config:
        """Read a config from text in the given format (``'.py'``, ``'.json'``, ``'.yaml'``)."""
        suffix = file_format if file_format.startswith(".") else f".{file_format}"
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, f"config{suffix}")
            with open(path, "w", encoding="utf-8") as file:
                file.write(cfg_str)
            cfg = Config.fromfile(path)
        object.__setattr__(cfg, "_filename", None)
        return cfg

    @staticmethod
    def diff(cfg1: Config | str | os.PathLike, cfg2: Config | str | os.PathLike) -> str:
        """A unified diff of two configs (objects or file paths) written as Python, keys sorted:
        ``print(Config.diff('configs/a.py', 'configs/b.py'))`` shows ``-lr = 0.1`` /
        ``+lr = 0.2`` lines for what differs."""
        dicts = [
            (cfg if isinstance(cfg, Config) else Config.fromfile(cfg)).to_dict()
            for cfg in (cfg1, cfg2)
        ]
        return config_diff(*dicts)

    @staticmethod
    def auto_argparser(description: str | None = None) -> tuple[argparse.ArgumentParser, Config]:
        """MMEngine's experimental parser made from the config named by the first command-line
        argument: ``config`` plus a ``--<dotted.key>`` option per value (see
        :func:`~runnerx.config.auto_args.add_config_args`). Returns ``(parser, cfg)``."""
        first = argparse.ArgumentParser(description=description, add_help=False)
        first.add_argument("config", help="config file path")
        cfg = Config.fromfile(first.parse_known_args()[0].config)
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("config", help="config file path")
        add_config_args(parser, cfg.to_dict())
        return parser, cfg

    @property
    def filename(self) -> str | None:
        """The path this config was read from, if any."""
        return self._filename

    @property
    def text(self) -> str:
        """The text of every file of the tree, each after its path, in the order they merge."""
        return self._text

    @property
    def env_variables(self) -> dict:
        """The environment variables that ``{{$NAME:default}}`` templates took values from."""
        return self._env_variables

    @property
    def pretty_text(self) -> str:
        """The final config as readable Python that loads back to an equal config."""
        return format_config(self.to_dict())

    def to_dict(self, keep_imported: bool = False) -> dict:
        """The config as plain dicts, lists and tuples.

        ``keep_imported`` is MMEngine's: there it adds the names a ``with read_base():``-style
        file imports (``SGD`` of ``from torch.optim import SGD``). runnerx does not keep them
        (they are no config values, see docs/config.md), so ``keep_imported=True`` warns and
        gives the same dict."""
        if keep_imported:
            warnings.warn(
                "Config.to_dict(keep_imported=True): runnerx keeps no names that a config file "
                "imports (they are no config values), so the dict is that of to_dict()",
                UserWarning,
                stacklevel=2,
            )
        return self._cfg_dict.to_dict()

    def merge_from_dict(
        self, options: dict, allow_list_keys: bool = True, source: str = "merge_from_dict"
    ) -> None:
        """Merge dotted-key options into the config: ``{'model.depth': 50, 'pipe.0.size': 8}``.

        With ``allow_list_keys`` a numeric key indexes a list. ``source`` names where the
        options came from in :meth:`explain` and in errors (``tools/`` scripts pass
        ``'--cfg-options'``). A key below a value that holds no keys (``lr.value=1`` over
        ``lr=0.1``) or past the end of a list is an error naming the option. As in MMEngine a
        key the config lacks is added; from ``'--cfg-options'`` that warns when a key of that
        name exists elsewhere (``max_epochs=3`` beside ``train_cfg.max_epochs``).
        """
        additions = check_options(self._cfg_dict, options, source, allow_list_keys)
        if source == "--cfg-options":
            for message in additions:
                warnings.warn(message, UserWarning, stacklevel=2)
        merged = merge_into(nest_dotted_keys(options), self._cfg_dict, allow_list_keys)
        object.__setattr__(self, "_cfg_dict", merged)
        self._overrides.extend(Override(key, value, source) for key, value in options.items())

    def explain(self, key: str) -> Explanation:
        """Where the value at dotted ``key`` came from: each file and line, then CLI options."""
        return explain(self._cfg_dict, key, self._source, self._overrides)

    def dump(self, file: str | os.PathLike | None = None) -> str | None:
        """Write the config to ``file`` (.py, .json, .yaml), or return its text if no file.

        The file is written atomically: a crash never leaves a half-written config.
        """
        if file is None:
            suffix = os.path.splitext(self._filename or "x.py")[1]
            return dump_text(self.to_dict(), suffix)
        file = os.fspath(file)
        text = dump_text(self.to_dict(), os.path.splitext(file)[1])
        write_atomically(file, text)
        return None

    def copy(self) -> Config:
        """A shallow copy (the top-level dict is new, nested values are shared)."""
        return copy.copy(self)

    def __copy__(self) -> Config:
        other = Config.__new__(Config)
        other.__setstate__(self.__getstate__())
        object.__setattr__(other, "_cfg_dict", self._cfg_dict.copy())
        object.__setattr__(other, "_overrides", list(self._overrides))
        return other

    def __deepcopy__(self, memo: dict) -> Config:
        other = Config.__new__(Config)
        memo[id(self)] = other
        other.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return other

    def __getstate__(self) -> tuple:
        return tuple(object.__getattribute__(self, name) for name in _STATE)

    def __setstate__(self, state: tuple) -> None:
        for name, value in zip(_STATE, state):
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        if name in _STATE:  # not set yet (during unpickling): not a config key
            raise AttributeError(name)
        return getattr(self._cfg_dict, name)

    def __getitem__(self, name: str) -> Any:
        return self._cfg_dict[name]

    def __setattr__(self, name: str, value: Any) -> None:
        self._cfg_dict[name] = value

    def __setitem__(self, name: str, value: Any) -> None:
        self._cfg_dict[name] = value

    def __delattr__(self, name: str) -> None:
        delattr(self._cfg_dict, name)

    def __delitem__(self, name: str) -> None:
        del self._cfg_dict[name]

    def __contains__(self, name: object) -> bool:
        return name in self._cfg_dict

    def __iter__(self):
        return iter(self._cfg_dict)

    def __len__(self) -> int:
        return len(self._cfg_dict)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._cfg_dict == other._cfg_dict
        return isinstance(other, dict) and self._cfg_dict == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Config (path: {self._filename}): {dict.__repr__(self._cfg_dict)}"


def add_args(
    parser: argparse.ArgumentParser, cfg: dict, prefix: str = ""
) -> argparse.ArgumentParser:
    """MMEngine's ``add_args``: a ``--<prefix><dotted.key>`` option in ``parser`` for each
    value of ``cfg`` (see :func:`~runnerx.config.auto_args.add_config_args`); returns
    ``parser``."""
    add_config_args(parser, cfg, prefix)
    return parser
