"""The runnerx version, kept in one place; ``version_info`` is it as a tuple, as MMEngine's
``mmengine.version_info`` is (``(0, 1, 0)``; a pre-release ``'1.2.0rc1'`` gives
``(1, 2, 0, 'rc1')``), for version checks that compare tuples."""

from __future__ import annotations

import re

__all__ = ["__version__", "parse_version_info", "version_info"]

__version__ = "0.1.0"


def parse_version_info(version_str: str) -> tuple[int | str, ...]:
    """``'1.2.0rc1'`` -> ``(1, 2, 0, 'rc1')``: each dot-separated part's leading number as an
    int, and what follows it (or a part without a number) as a str (MMEngine's function of the
    same name)."""
    parts: list[int | str] = []
    for part in version_str.split("."):
        number, rest = re.fullmatch(r"(\d*)(.*)", part).groups()  # type: ignore[union-attr]
        parts.extend([int(number)] if number else [])
        parts.extend([rest] if rest else [])
    return tuple(parts)


version_info = parse_version_info(__version__)
