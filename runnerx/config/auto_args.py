"""``Config.auto_argparser``: a command-line option for every scalar and list of a config."""

from __future__ import annotations

import argparse
import logging
from collections.abc import Mapping
from typing import Any

_logger = logging.getLogger(__name__)


def add_config_args(
    parser: argparse.ArgumentParser, cfg: Mapping[str, Any], prefix: str = ""
) -> None:
    """Add ``--<dotted.key>`` to ``parser`` for each value of ``cfg``, as MMEngine's
    ``auto_argparser`` does: a str takes a string, a bool is a flag (``store_true``), an int or
    float is parsed as one, a list or tuple takes one or more values of its first item's type,
    and a dict adds its keys under ``<key>.``. Options default to None (False for flags); any
    other value (None, an object) gets no option and a warning in the log."""
    for key, value in cfg.items():
        option = f"--{prefix}{key}"
        if isinstance(value, Mapping):
            add_config_args(parser, value, f"{prefix}{key}.")
        elif isinstance(value, bool):
            parser.add_argument(option, action="store_true")
        elif isinstance(value, (str, int, float)):
            parser.add_argument(option, type=type(value))
        elif isinstance(value, (list, tuple)):
            first = value[0] if value else None
            kind = type(first) if isinstance(first, (str, int, float)) else str
            parser.add_argument(option, type=kind, nargs="+")
        else:
            _logger.warning(f"auto_argparser: no option for {prefix}{key} ({type(value).__name__})")
