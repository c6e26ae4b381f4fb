"""Example datasets that need no download: handwritten digits (scikit-learn's bundled copy)
and byte-level text from Python's standard library."""

from runnerx.data.examples.char_text import CharTextDataset
from runnerx.data.examples.digits import DigitsDataset

__all__ = ["CharTextDataset", "DigitsDataset"]
