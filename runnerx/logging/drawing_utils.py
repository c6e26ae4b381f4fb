"""What the Visualizer's drawing methods share: their arguments as MMEngine takes them (arrays
or tensors, one value for all items or a list with one per item, colours as matplotlib names
such as ``'red'`` or ``'g'`` or as RGB tuples of 0-255 values), the drawn figure as an RGB
array, and OpenCV's weighted sum of two images. MMEngine's public helpers of the same kind
(``tensor2ndarray``, ``value2list``, ``check_length``, ``color_str2rgb``) are here under its
names; :mod:`runnerx.visualization.utils` gathers all of them at MMEngine's path.

Bad arguments are errors that name the argument (TypeError / ValueError that are also
MMEngine's AssertionError where it asserts)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

#: what one font size, line width or alpha may be (numpy scalars as well as Python numbers)
NUMBER = (int, float, np.integer, np.floating)


def import_matplotlib() -> Any:
    """The ``matplotlib`` module, or an ImportError saying how to install it."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "the Visualizer's drawing methods (set_image, draw_*, show) draw with matplotlib: "
            "pip install matplotlib (or pip install 'runnerx[vis]')"
        ) from None
    return matplotlib


def tensor2ndarray(value: Any) -> Any:
    """``value`` as a numpy array if it is a tensor (on any device); anything else as it is."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def as_array(value: Any, name: str) -> np.ndarray:
    """``value`` (a numpy array or a tensor on any device) as a numpy array."""
    value = tensor2ndarray(value)
    if isinstance(value, np.ndarray):
        return value
    raise TypeAssertionError(
        f"`{name}` should be a numpy array or a torch.Tensor, but got {type(value).__name__}"
    )


def check_type(value: Any, types: tuple[type, ...], name: str) -> None:
    """Raise a TypeError naming ``name`` unless ``value`` is one of ``types``."""
    if not isinstance(value, types):
        expected = " or ".join(kind.__name__ for kind in types)
        raise TypeAssertionError(f"`{name}` should be {expected}, but got {type(value).__name__}")


def check_length(name: str, value: Any, valid_length: int) -> None:
    """Raise an error naming ``name`` if ``value`` is a list of fewer than ``valid_length``
    entries (anything that is not a list passes)."""
    if isinstance(value, list) and len(value) < valid_length:
        raise ValueAssertionError(
            f"`{name}` has {len(value)} entries for {valid_length} items; give one per item "
            "or a single value for all"
        )


def value2list(value: Any, valid_type: type | tuple[type, ...], expand_dim: int) -> Any:
    """``value`` repeated ``expand_dim`` times in a list if it is a ``valid_type``; anything
    else as it is."""
    if isinstance(value, valid_type):
        return [value] * expand_dim
    return value


def per_item(value: Any, single: tuple[type, ...], count: int, name: str) -> list:
    """``value`` as a list with one entry per item: a single value (one of ``single``) is
    repeated ``count`` times; a list must have at least ``count`` entries."""
    check_type(value, (*single, list), name)
    check_length(name, value, count)
    return value2list(value, single, count)


def matplotlib_colors(colors: Any, name: str) -> Any:
    """MMEngine's colours for matplotlib: a name stays as it is, an RGB tuple of 0-255 values
    becomes 0-1 floats, a list is converted entry by entry."""
    if isinstance(colors, str):
        return colors
    if isinstance(colors, tuple):
        return tuple(channel / 255 for channel in checked_rgb(colors, name))
    if isinstance(colors, list):
        return [_one_matplotlib_color(color, name) for color in colors]
    raise TypeAssertionError(
        f"`{name}` should be a colour name, an RGB tuple or a list of them, "
        f"but got {type(colors).__name__}"
    )


def _one_matplotlib_color(color: Any, name: str) -> Any:
    """An entry of a list of colours: a name or an RGB tuple (a list such as [220, 20, 60]
    inside the list is named, with the tuple to write instead)."""
    if isinstance(color, list):
        raise TypeAssertionError(
            f"`{name}` holds the list {color!r}; an RGB colour is a tuple: "
            f"{tuple(color)!r} (a list of colours holds names or tuples)"
        )
    return matplotlib_colors(color, name)


def color_str2rgb(color: str) -> tuple[int, int, int]:
    """A matplotlib colour name (``'red'``, ``'g'``, ``'#ff8000'``) as an RGB tuple of 0-255
    ints, each channel scaled and truncated (any alpha is dropped)."""
    matplotlib = import_matplotlib()
    red, green, blue = (int(channel * 255) for channel in matplotlib.colors.to_rgb(color))
    return red, green, blue


def rgb_colors(colors: Any, count: int, name: str) -> list[tuple[int, ...]]:
    """One 0-255 RGB tuple per item (a colour name becomes matplotlib's colour, each channel
    scaled to 0-255 and truncated, as MMEngine's masks take it)."""
    rgb = []
    for color in per_item(colors, (str, tuple), count, name):
        if isinstance(color, str):
            color = color_str2rgb(color)
        if not isinstance(color, tuple):
            raise ValueAssertionError(
                f"`{name}`: a colour is a name or an RGB tuple of 3 values, got {color!r}"
            )
        rgb.append(checked_rgb(color, name))
    return rgb


def checked_rgb(color: tuple, name: str) -> tuple:
    """``color`` if it is an RGB tuple of 3 values in 0-255, else an error naming ``name``."""
    if len(color) != 3 or not all(0 <= channel <= 255 for channel in color):
        raise ValueAssertionError(
            f"`{name}`: an RGB colour is a tuple of 3 values in 0-255, got {color!r}"
        )
    return color


def points_array(value: Any, name: str, width: int) -> np.ndarray:
    """``value`` as an N x ``width`` array (one row, such as ``[x, y]``, becomes 1 x width)."""
    array = as_array(value, name)
    if array.ndim == 1:
        array = array[None]
    if array.ndim != 2 or array.shape[1] != width:
        raise ValueAssertionError(
            f"The shape of `{name}` should be (N, {width}), but got {tuple(array.shape)}"
        )
    return array


def canvas_rgb(canvas: Any) -> np.ndarray:
    """Render a matplotlib Agg canvas and return its pixels as an H x W x 3 RGB uint8 array."""
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def blend(image: np.ndarray, overlay: np.ndarray, alpha: float) -> np.ndarray:
    """``image * (1 - alpha) + overlay * alpha`` as uint8, rounded as OpenCV's ``addWeighted``
    (which MMEngine blends with) rounds: in float32, the overlay's share first, ties to even."""
    image_share = image.astype(np.float64) * np.float32(1 - alpha)
    overlay_share = (overlay.astype(np.float64) * np.float32(alpha)).astype(np.float32)
    mixed = (image_share + overlay_share).astype(np.float32)
    return np.clip(np.rint(mixed), 0, 255).astype(np.uint8)
