"""MMEngine's ``mmengine.visualization.utils`` path: the helpers its visualizers are written
with, under MMEngine's names and argument orders. They are the ones runnerx's drawing methods
use (:mod:`runnerx.logging.drawing_utils`, :mod:`runnerx.logging.featmap`), and need no OpenCV.

.. code-block:: python

    from runnerx.visualization.utils import color_str2rgb, convert_overlay_heatmap

    color_str2rgb('orange')                           # (255, 165, 0)
    overlay = convert_overlay_heatmap(feat_map, image, alpha=0.5)   # H x W x 3 RGB uint8

Bad arguments raise MMEngine's error types: ``TypeError`` from the type checks, and errors
that are also ``AssertionError`` where MMEngine asserts.
"""

from __future__ import annotations

from typing import Any

from runnerx.logging.drawing_show import wait_for_key
from runnerx.logging.drawing_utils import canvas_rgb as img_from_canvas
from runnerx.logging.drawing_utils import (
    check_length,
    color_str2rgb,
    matplotlib_colors,
    tensor2ndarray,
    value2list,
)
from runnerx.logging.drawing_utils import check_type as _check_type
from runnerx.logging.featmap import heatmap as convert_overlay_heatmap

__all__ = [
    "check_length",
    "check_type",
    "check_type_and_length",
    "color_str2rgb",
    "color_val_matplotlib",
    "convert_overlay_heatmap",
    "img_from_canvas",
    "tensor2ndarray",
    "value2list",
    "wait_continue",
]


def check_type(name: str, value: Any, valid_type: type | tuple[type, ...]) -> None:
    """Raise a TypeError naming ``name`` unless ``value`` is a ``valid_type``."""
    _check_type(value, valid_type if isinstance(valid_type, tuple) else (valid_type,), name)


def check_type_and_length(
    name: str, value: Any, valid_type: type | tuple[type, ...], valid_length: int
) -> None:
    """:func:`check_type`, then :func:`check_length` (a list needs ``valid_length`` entries
    or more)."""
    check_type(name, value, valid_type)
    check_length(name, value, valid_length)


def color_val_matplotlib(colors: str | tuple | list) -> str | tuple | list:
    """Colours for matplotlib: a name stays as it is, an RGB tuple of 0-255 values becomes
    0-1 floats, a list is converted entry by entry."""
    return matplotlib_colors(colors, "colors")


def wait_continue(figure: Any, timeout: float = 0, continue_key: str = " ") -> int:
    """Show ``figure`` (made with ``pyplot.figure``) and wait for ``continue_key``,
    ``timeout`` seconds (0: no limit) or the window to close: 1 if it was closed, else 0 (at
    once in a notebook's inline backend)."""
    import matplotlib.pyplot as plt

    if "inline" in plt.get_backend():
        return 0
    return int(wait_for_key(figure, timeout, continue_key))
