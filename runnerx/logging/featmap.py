"""``Visualizer.draw_featmap``: a feature map as a heatmap, over an image or alone.

MMEngine colours feature maps with OpenCV (min-max scaling to 0-255, the JET colour map,
``addWeighted`` over the image); this module does the same steps with numpy and torch, to
the same pixels but for one level here and there: OpenCV's own rounding of some integer and
float64 maps, and its fixed-point bilinear resize of the image when ``resize_shape`` is given.

.. code-block:: python

    heatmap = Visualizer.draw_featmap(features[0], image, channel_reduction='select_max')
    visualizer.add_image('features', heatmap, step=runner.iter)
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

from .drawing_utils import as_array, blend, canvas_rgb, import_matplotlib

_REDUCTIONS = ("squeeze_mean", "select_max")

# OpenCV's COLORMAP_JET as RGB: each channel rises by 4 levels a step, stays at 255, then
# falls by 4 (blue from 128 at level 0, green from level 32, red from level 96). OpenCV's own
# table comes from rounded floats: its blue at level 159 is 1, not 2, and so is ours.
_LEVELS = np.arange(256)[:, None]
_JET = np.clip(
    np.minimum(4 * _LEVELS + np.array([-382, -128, 128]), np.array([1148, 892, 638]) - 4 * _LEVELS),
    0,
    255,
).astype(np.uint8)
_JET[159, 2] = 1


def draw_featmap(
    featmap: torch.Tensor,
    overlaid_image: np.ndarray | None = None,
    channel_reduction: str | None = "squeeze_mean",
    topk: int = 20,
    arrangement: tuple[int, int] = (4, 5),
    resize_shape: tuple[int, int] | None = None,
    alpha: float = 0.5,
) -> np.ndarray:
    """A C x H x W feature map as an RGB heatmap, blended over ``overlaid_image`` (RGB or
    grey) with ``alpha`` when given.

    - ``channel_reduction='squeeze_mean'`` (the mean of the channels) or ``'select_max'``
      (the channel with the largest sum): one heatmap.
    - ``channel_reduction=None, topk<=0``: a 1- or 3-channel map as one heatmap.
    - ``channel_reduction=None, topk>0``: the ``topk`` channels with the largest sums, each
      labelled with its index, in a grid of ``arrangement`` (rows, columns).

    The map is resized (bilinear) to ``resize_shape`` (H, W), and the image with it; without
    one, to the image's size when the two differ.
    """
    if not isinstance(featmap, torch.Tensor):
        raise TypeAssertionError(
            f"`featmap` should be a torch.Tensor, but got {type(featmap).__name__}"
        )
    if featmap.ndim != 3:
        raise ValueAssertionError(
            f"`featmap` should be C x H x W, but got {featmap.ndim} dimensions"
        )
    featmap = featmap.detach().cpu()
    image = None if overlaid_image is None else _rgb(overlaid_image)
    if image is not None and image.shape[:2] != featmap.shape[1:]:
        warnings.warn(
            f"the overlaid_image is {image.shape[:2]} and the featmap {tuple(featmap.shape[1:])}: "
            "the feature map is interpolated to the image, which may not line up",
            UserWarning,
            stacklevel=3,
        )
        if resize_shape is None:
            featmap = _resize(featmap, image.shape[:2])
    if resize_shape is not None:
        featmap = _resize(featmap, resize_shape)
        if image is not None:
            image = resize_image(image, resize_shape)

    if channel_reduction is not None:
        if channel_reduction not in _REDUCTIONS:
            raise ValueAssertionError(
                f"`channel_reduction` should be one of {_REDUCTIONS} or None, but got "
                f"{channel_reduction!r}"
            )
        if channel_reduction == "select_max":
            reduced = featmap[int(torch.topk(featmap.sum(dim=(1, 2)), 1).indices)]
        else:
            reduced = featmap.mean(dim=0)
        return heatmap(reduced, image, alpha)
    if topk <= 0:
        if featmap.shape[0] not in (1, 3):
            raise ValueAssertionError(
                "with channel_reduction=None and topk <= 0 the featmap should have 1 or 3 "
                f"channels, but it has {featmap.shape[0]}; reduce the channels with "
                "channel_reduction or pick some with topk > 0"
            )
        return heatmap(featmap, image, alpha)
    return _channel_grid(featmap, image, topk, arrangement, alpha)


def heatmap(feature: Any, image: np.ndarray | None = None, alpha: float = 0.5) -> np.ndarray:
    """An H x W (or 1/3 x H x W) feature as an RGB JET heatmap, blended over ``image`` (RGB,
    the heatmap's size) with ``alpha``: MMEngine's ``convert_overlay_heatmap``."""
    values = as_array(feature, "featmap")
    if not (values.ndim == 2 or (values.ndim == 3 and values.shape[0] in (1, 3))):
        raise ValueAssertionError(
            f"`feat_map` should be H x W or C x H x W with 1 or 3 channels, but got "
            f"{tuple(values.shape)}"
        )
    if values.ndim == 3:
        values = values.transpose(1, 2, 0)
    levels = _min_max_levels(values)
    if levels.ndim == 3 and levels.shape[2] == 3:
        # OpenCV colours a 3-channel image through its grey: the channels taken as B, G, R
        # in its 15-bit fixed point
        weighted = levels.astype(np.int64) @ np.array([3735, 19235, 9798])
        levels = ((weighted + (1 << 14)) >> 15).astype(np.uint8)
    elif levels.ndim == 3:
        levels = levels[..., 0]
    colored = _JET[levels]
    return colored if image is None else blend(image, colored, alpha)


def _min_max_levels(values: np.ndarray) -> np.ndarray:
    """``values`` scaled to 0-255 from their min and max into their own dtype, then truncated
    to uint8, as OpenCV's ``normalize(NORM_MINMAX)`` does it (a float32 scale and shift
    unless float64; integers rounded, as OpenCV converts to them)."""
    dtype = values.dtype
    single = dtype != np.float64
    values = values.astype(np.float32) if single else values
    low, high = float(values.min()), float(values.max())
    scale = 255.0 * (1.0 / (high - low)) if high - low > np.finfo(np.float64).eps else 0.0
    shift = -low * scale
    if single:
        scale = float(np.float32(scale))
        shift = -float(np.float32(low * scale))
    # OpenCV multiplies and adds float64 in one fused step; long double comes closest to it
    scaled = values.astype(np.float64 if single else np.longdouble) * scale + shift
    if np.issubdtype(dtype, np.integer):
        scaled = np.rint(scaled)
    return scaled.astype(dtype).astype(np.uint8)


def _channel_grid(
    featmap: torch.Tensor,
    image: np.ndarray | None,
    topk: int,
    arrangement: tuple[int, int],
    alpha: float,
) -> np.ndarray:
    rows, cols = arrangement
    if rows * cols < topk:
        raise ValueAssertionError(
            f"`arrangement` {tuple(arrangement)} has {rows * cols} places for topk={topk} "
            "channels; make rows * columns at least topk"
        )
    channels, height, width = featmap.shape
    _, indices = torch.topk(featmap.sum(dim=(1, 2)), min(channels, topk))
    import_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(frameon=False)
    canvas = FigureCanvasAgg(figure)
    figure.subplots_adjust(left=0, right=1, bottom=0, top=1, wspace=0, hspace=0)
    dpi = figure.get_dpi()
    figure.set_size_inches((width * cols + 1e-2) / dpi, (height * rows + 1e-2) / dpi)
    for place, channel in enumerate(indices.tolist()):
        axes = figure.add_subplot(rows, cols, place + 1)
        axes.axis("off")
        axes.text(2, 15, f"channel: {channel}", fontsize=10)
        axes.imshow(heatmap(featmap[channel], image, alpha))
    return canvas_rgb(canvas)


def _rgb(image: np.ndarray) -> np.ndarray:
    image = as_array(image, "overlaid_image")
    if image.ndim == 2:
        return np.repeat(image[..., None], 3, axis=2)
    if image.ndim != 3 or image.shape[2] != 3:
        raise ValueAssertionError(
            f"`overlaid_image` should be H x W x 3 (RGB) or H x W, but got {image.shape}"
        )
    return image


def _resize(featmap: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    return F.interpolate(featmap[None], tuple(shape), mode="bilinear", align_corners=False)[0]


def resize_image(image: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Bilinear resize of an RGB image to ``shape`` (H, W), as ``cv2.resize`` samples it
    (pixel centres, no antialiasing); OpenCV's fixed point can round one level apart."""
    channels_first = torch.from_numpy(np.ascontiguousarray(image)).permute(2, 0, 1).float()
    resized = _resize(channels_first, shape).permute(1, 2, 0).numpy()
    return np.clip(np.rint(resized), 0, 255).astype(np.uint8)
