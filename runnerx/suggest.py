"""Wording that error messages share: close matches for a misspelt name (the "did you mean
...?" part), counts of things, how many a shortened list leaves out, and what was given
where an instance belongs."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def close_matches(word: str, candidates: Iterable[object], n: int = 3) -> list[str]:
    """Up to ``n`` candidates that look like ``word``, ignoring case (``'Adamw'`` finds
    ``'AdamW'`` first)."""
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(str(candidate).lower(), str(candidate))
    found = difflib.get_close_matches(str(word).lower(), list(by_lower), n=n, cutoff=0.6)
    return [by_lower[match] for match in found]


def counted(number: int, noun: str) -> str:
    """``'1 rank'``, ``'3 ranks'``: ``number`` of ``noun`` (plural with an ``s``)."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def more_than(shown: int, total: int) -> str:
    """What a list cut to its first ``shown`` of ``total`` items leaves out: ``' (and 3
    more)'``, or nothing."""
    return f" (and {total - shown} more)" if total > shown else ""


def given(value: object, args: str = "...") -> str:
    """What an error says was given where an object belongs: for a class, ``'the class
    ToyModel; pass an instance (ToyModel(...))'`` (``args`` fills the parentheses), and
    otherwise the type's name."""
    if isinstance(value, type):
        return f"the class {value.__name__}; pass an instance ({value.__name__}({args}))"
    return type(value).__name__
