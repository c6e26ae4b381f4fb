"""minidet: a tiny detector in the OpenMMLab style (one box and one class per image)."""

__version__ = "0.1.0"
