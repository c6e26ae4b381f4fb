"""Wording that error messages share: close matches for a misspelt name and the "did you
mean ...?" hint naming them, counts of things, how many a shortened list leaves out, what
was given where an instance belongs, and the refusal of keywords a ``**kwargs`` took that
the function does not mean."""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Iterable, Mapping


def close_matches(word: str, candidates: Iterable[object], n: int = 3) -> list[str]:
    """Up to ``n`` candidates that look like ``word``, ignoring case (``'Adamw'`` finds
    ``'AdamW'`` first)."""
    by_lower: dict[str, str] = {}
    for candidate in candidates:
        by_lower.setdefault(str(candidate).lower(), str(candidate))
    found = difflib.get_close_matches(str(word).lower(), list(by_lower), n=n, cutoff=0.6)
    return [by_lower[match] for match in found]


#: the forms of :func:`did_you_mean`'s hint: a clause ending a message, a sentence after
#: it, an aside inside it
CLAUSE, SENTENCE, ASIDE = "; did you mean {}?", " Did you mean {}?", " (did you mean {}?)"


def did_you_mean(word: object, candidates: Iterable[object], n: int = 1, form: str = CLAUSE) -> str:
    """The hint for a misspelt ``word``: ``form`` (:data:`CLAUSE`, :data:`SENTENCE` or
    :data:`ASIDE`) naming up to ``n`` of the closest ``candidates`` (``'x' or 'y'``), or
    ``""`` when none is close."""
    close = close_matches(str(word), candidates, n=n)
    return form.format(" or ".join(map(repr, close))) if close else ""


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


def refuse_unknown_keywords(
    name: str,
    given: Mapping,
    function: Callable,
    renamed: Mapping[str, str] | None = None,
    renamed_from: str = "",
) -> None:
    """A TypeError naming the keywords ``given`` (what a ``**kwargs`` took) that are no
    parameter of ``function``, the closest parameter to the first of them, and those it
    takes: a misspelt keyword must not be ignored, and Python's own message gives no close
    match before 3.13. Keywords in ``renamed`` (another framework's names, ``renamed_from``
    saying whose) are named with what they are here instead, as the closest name could
    mislead (Lightning's ``save_top_k`` is not ``save_last``)."""
    other = [f"{key} -> {renamed[key]}" for key in given if renamed and key in renamed]
    if other:
        raise TypeError(
            f"{name} got arguments of {renamed_from or 'another framework'} that it names "
            f"otherwise: {'; '.join(other)}"
        )
    known = [
        p.name
        for p in inspect.signature(function).parameters.values()
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return
    close = close_matches(unknown[0], known, n=1)
    hint = f" ({unknown[0]!r}; did you mean {close[0]!r}?)" if close else ""
    raise TypeError(f"{name}() got unknown keyword(s) {unknown}{hint}; it takes {', '.join(known)}")
