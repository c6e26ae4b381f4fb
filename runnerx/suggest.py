"""Close matches for a misspelt name, for the "did you mean ...?" part of error messages."""

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
