"""The canvas of the Visualizer's drawing API (MMEngine's): the image drawn on
(``set_image``), the drawn result as an RGB array (``get_image``), ``show``, masks painted
over the pixels, and what the drawing methods of :mod:`runnerx.logging.drawing` share.

The figure is a matplotlib ``Figure`` on an Agg canvas (no display needed), made when an
image is first set, so that building a Visualizer does not import matplotlib.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from runnerx.dist import is_main_process, master_only
from runnerx.utils.errors import ValueAssertionError

from .drawing_show import show_image
from .drawing_utils import (
    NUMBER,
    as_array,
    blend,
    canvas_rgb,
    import_matplotlib,
    matplotlib_colors,
    per_item,
    rgb_colors,
)

F = TypeVar("F", bound=Callable[..., Any])
Colors = str | tuple | list


def draws(method: F) -> F:
    """Make ``method`` a drawing method: it needs an image, runs on rank 0 only and returns
    the visualizer for chained calls, on every rank (MMEngine's return None on other ranks,
    so a chain breaks there)."""

    @functools.wraps(method)
    def draw(self: CanvasMixin, *args: Any, **kwargs: Any) -> Any:
        if not is_main_process():
            return self
        self._check_image(method.__name__)
        method(self, *args, **kwargs)
        return self

    return draw  # type: ignore[return-value]


class CanvasMixin:
    """The image a Visualizer draws on, and the methods that work on its pixels (MMEngine's
    names, arguments and defaults). ``fig_save_cfg`` (``Figure`` keyword arguments) sets up
    the figure drawn on; ``fig_save``, ``ax_save``, ``fig_save_canvas`` and ``dpi`` are
    MMEngine's attributes for it, made when first used."""

    fig_save_cfg: dict
    fig_show_cfg: dict
    _image: np.ndarray | None = None
    _save_figure: tuple | None = None  # (canvas, figure, axes), made on first use

    @property
    def fig_save_canvas(self) -> Any:
        """The Agg canvas of the figure drawn on."""
        return self._figure()[0]

    @property
    def fig_save(self) -> Any:
        """The matplotlib Figure drawn on."""
        return self._figure()[1]

    @property
    def ax_save(self) -> Any:
        """The axes the image and the drawings are on."""
        return self._figure()[2]

    @property
    def dpi(self) -> float:
        """The dots per inch of the figure drawn on (the image's pixels are its pixels)."""
        return self.fig_save.get_dpi()

    @master_only
    def set_image(self, image: Any) -> None:
        """Start drawing on ``image`` (H x W x 3 RGB, cast to uint8 as MMEngine does); what
        was drawn before is cleared."""
        if image is None:
            raise ValueAssertionError("set_image: `image` is None; give an H x W x 3 RGB array")
        self._image = as_array(image, "image").astype(np.uint8)
        self.height, self.width = self._image.shape[:2]
        self._default_font_size = max(np.sqrt(self.height * self.width) // 90, 10)
        _, figure, axes = self._figure()
        dpi = figure.get_dpi()
        # matplotlib truncates inches * dpi to whole pixels: 0.01 more keeps float error
        # from losing one (matplotlib issue 15363)
        figure.set_size_inches((self.width + 1e-2) / dpi, (self.height + 1e-2) / dpi)
        axes.cla()
        axes.axis(False)
        axes.imshow(self._image, extent=(0, self.width, self.height, 0), interpolation="none")

    @master_only
    def get_image(self) -> np.ndarray:
        """The image with everything drawn so far: H x W x 3 RGB uint8, what ``add_image``
        records."""
        self._check_image("get_image")
        return canvas_rgb(self.fig_save_canvas)

    @master_only
    def show(
        self,
        drawn_img: np.ndarray | None = None,
        win_name: str = "image",
        wait_time: float = 0.0,
        continue_key: str = " ",
        backend: str = "matplotlib",
    ) -> Any:
        """Show ``drawn_img`` (default: :meth:`get_image`) in a window titled ``win_name``
        until ``continue_key`` is pressed or ``wait_time`` seconds (0: no limit) pass.

        ``backend='matplotlib'`` uses matplotlib's backend: in Jupyter (inline) it returns the
        figure, which the notebook shows; without a display (Agg) it shows nothing, warns and
        returns at once. ``backend='cv2'`` needs OpenCV with its GUI (``pip install
        opencv-python``); an OpenCV without one warns instead of showing.
        """
        image = self.get_image() if drawn_img is None else drawn_img
        return show_image(self, image, win_name, wait_time, continue_key, backend)

    @draws
    def draw_binary_masks(
        self,
        binary_masks: Any,
        colors: Colors = "g",
        alphas: float | list[float] = 0.8,
    ) -> Any:
        """Paint boolean masks (N x H x W, or H x W for one, the image's size) over what is
        drawn so far, each in its colour with its ``alphas`` opacity."""
        masks = as_array(binary_masks, "binary_masks")
        if masks.dtype != np.bool_:
            raise ValueAssertionError(
                f"The dtype of `binary_masks` should be bool, but got {masks.dtype}"
            )
        masks = masks[None] if masks.ndim == 2 else masks
        image = self.get_image()
        if masks.ndim != 3 or masks.shape[1:] != image.shape[:2]:
            raise ValueAssertionError(
                f"`binary_masks` must have the image's size {image.shape[:2]}: N x H x W or "
                f"H x W, got {masks.shape}"
            )
        count = len(masks)
        mask_colors = rgb_colors(colors, count, "colors")
        opacities = per_item(alphas, NUMBER, count, "alphas")
        for mask, color, alpha in zip(masks, mask_colors, opacities):
            painted = np.where(mask[..., None], np.asarray(color, np.uint8), image)
            image = blend(image, painted, alpha)
        self.ax_save.imshow(image, extent=(0, self.width, self.height, 0), interpolation="nearest")

    def _figure(self) -> tuple:
        if self._save_figure is None:
            import_matplotlib()
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            figure = Figure(**self.fig_save_cfg)
            axes = figure.add_subplot()
            axes.axis(False)
            figure.subplots_adjust(left=0, right=1, bottom=0, top=1)  # no white margins
            self._save_figure = (FigureCanvasAgg(figure), figure, axes)
        return self._save_figure

    def _check_image(self, method: str) -> None:
        if self._image is None:
            raise ValueAssertionError(
                f"Visualizer.{method}: there is no image yet; call set_image(image) first "
                "(or build Visualizer(image=...))"
            )

    def _warn_outside(self, points: np.ndarray, what: str) -> None:
        x, y = points[..., 0], points[..., 1]
        if not ((x >= 0) & (x < self.width) & (y >= 0) & (y < self.height)).all():
            warnings.warn(
                f"The {what} is out of bounds of the {self.width} x {self.height} image, the "
                f"drawn {what} may not be in the image",
                UserWarning,
                stacklevel=4,
            )

    def _line_widths(self, line_widths: Any, count: int) -> list:
        widths = [line_widths] * count if isinstance(line_widths, NUMBER) else line_widths
        return [min(max(width, 1), self._default_font_size / 4) for width in widths]

    def _add_polygons(
        self,
        polygons: list,
        edge_colors: Colors,
        line_styles: Any,
        line_widths: Any,
        face_colors: Colors,
        alpha: float,
    ) -> None:
        from matplotlib.collections import PolyCollection

        self.ax_save.add_collection(
            PolyCollection(
                polygons,
                alpha=alpha,
                facecolor=matplotlib_colors(face_colors, "face_colors"),
                linestyles=line_styles,
                edgecolors=matplotlib_colors(edge_colors, "edge_colors"),
                linewidths=self._line_widths(line_widths, len(polygons)),
            )
        )
