"""Parse ``--cfg-options key=value`` command-line overrides into Python values.

Values are read by a small parser, never evaluated, and follow MMEngine's rules so an
OpenMMLab command line means the same here::

    --cfg-options model.backbone.depth=101 optim_wrapper.optimizer.lr=1e-3 \\
        data.mean=[123.675,116.28,103.53] test.scales=[(1,2),(3,4)] work_dir=None

gives ``{'model.backbone.depth': 101, 'optim_wrapper.optimizer.lr': 0.001, ...}``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

__all__ = ["DictAction", "parse_option_value"]

_CLOSER = {"[": "]", "(": ")"}
_QUOTES = "'\""


def parse_option_value(text: str) -> Any:
    """Turn one command-line value into a Python value without evaluating it.

    ``[...]`` is a list and ``(...)`` a tuple, nested to any depth; a bare ``a,b,1`` is the list
    ``['a', 'b', 1]``. An element is an int, else a float, else ``true``/``false`` (any case)
    as a bool, ``None`` as None, else the string itself with surrounding spaces stripped.
    ``'...'`` or ``"..."`` around an element keeps exactly the quoted text as a string.
    Unbalanced brackets or quotes raise ``ValueError`` pointing at the spot.
    """
    return _Parser(text).parse()


class _Parser:
    """Recursive-descent reader over one value; ``pos`` is the index of the next character."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Any:
        items, saw_comma = self._sequence(None, 0)
        if saw_comma:
            return items
        # A single element is returned as is; an empty value is the empty string.
        return items[0] if items else ""

    def _sequence(self, closer: str | None, open_pos: int) -> tuple[list, bool]:
        """Comma-separated elements up to ``closer`` (or the end of text when None).

        A trailing comma is allowed; an empty slot between two commas is the empty string.
        """
        items: list = []
        saw_comma = False
        while True:
            self._skip_spaces()
            if self._at_end(closer, open_pos):
                return items, saw_comma
            items.append(self._element())
            self._skip_spaces()
            if self._at_end(closer, open_pos):
                return items, saw_comma
            if self.text[self.pos] != ",":
                expected = f"',' or {closer!r}" if closer else "',' or the end of the value"
                self._fail(f"expected {expected}, found {self.text[self.pos]!r}", self.pos)
            self.pos += 1
            saw_comma = True

    def _at_end(self, closer: str | None, open_pos: int) -> bool:
        if self.pos == len(self.text):
            if closer is not None:
                opener = self.text[open_pos]
                self._fail(f"{opener!r} is never closed", open_pos)
            return True
        char = self.text[self.pos]
        if char in "])":
            if closer is None:
                self._fail(f"{char!r} has no matching opening bracket", self.pos)
            if char != closer:
                self._fail(f"expected {closer!r} to close {self.text[open_pos]!r}", self.pos)
            return True
        return False

    def _element(self) -> Any:
        char = self.text[self.pos]
        if char in _CLOSER:
            open_pos = self.pos
            self.pos += 1
            items, _ = self._sequence(_CLOSER[char], open_pos)
            self.pos += 1  # the closing bracket
            return tuple(items) if char == "(" else items
        if char in _QUOTES:
            end = self.text.find(char, self.pos + 1)
            if end < 0:
                self._fail(f"quote {char} is never closed", self.pos)
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            return value
        return _scalar(self._bare_token())

    def _bare_token(self) -> str:
        """Unquoted text up to a ',' or closing bracket outside any brackets it opens itself.

        Brackets inside a token (``f(a,b)``) must balance and keep their commas; quotes inside a
        token (``don't``) are plain characters.
        """
        start = self.pos
        opened: list[int] = []
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in _CLOSER:
                opened.append(self.pos)
            elif char in "])":
                if not opened:
                    break
                if char != _CLOSER[text[opened[-1]]]:
                    expected = _CLOSER[text[opened[-1]]]
                    self._fail(f"expected {expected!r} to close {text[opened[-1]]!r}", self.pos)
                opened.pop()
            elif char == "," and not opened:
                break
            self.pos += 1
        if opened:
            self._fail(f"{text[opened[-1]]!r} is never closed", opened[-1])
        return text[start : self.pos].strip()

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def _fail(self, message: str, pos: int) -> None:
        raise ValueError(
            f"cannot parse option value {self.text!r}: {message} (at column {pos + 1})\n"
            f"    {self.text}\n    {' ' * pos}^"
        )


def _scalar(token: str) -> Any:
    try:
        return int(token)
    except ValueError:
        pass
    try:
        return float(token)
    except ValueError:
        pass
    lowered = token.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if token == "None":
        return None
    return token


class DictAction(argparse.Action):
    """Argparse action collecting ``key=value`` items into one dict of parsed values.

    ``parser.add_argument('--cfg-options', nargs='+', action=DictAction)`` turns
    ``--cfg-options model.backbone.depth=50 x.0.y=[1,2]`` into
    ``{'model.backbone.depth': 50, 'x.0.y': [1, 2]}``; repeated flags add to the same dict.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        """Parse each ``key=value`` item and merge it into the dict on ``namespace``."""
        options = dict(getattr(namespace, self.dest, None) or {})
        if isinstance(values, str):
            values = [values]
        flag = option_string or self.dest
        for item in values or ():
            key, sep, text = str(item).partition("=")
            if not sep or not key:
                parser.error(f"{flag}: expected key=value, got {item!r}")
            try:
                options[key] = parse_option_value(text)
            except ValueError as err:
                parser.error(f"{flag}: {key}: {err}")
        setattr(namespace, self.dest, options)
