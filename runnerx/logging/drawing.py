"""MMEngine's drawing methods of the Visualizer: points, texts, lines, circles, boxes and
polygons drawn with matplotlib over the image of :meth:`set_image`.

.. code-block:: python

    vis = Visualizer(image=image)  # H x W x 3 RGB uint8
    vis.draw_bboxes(np.array([[10, 10, 60, 40]]), edge_colors='r').draw_texts(
        'cat', np.array([10, 10]), colors=(255, 255, 0))
    vis.add_image('pred', vis.get_image(), step=3)

Each runs on rank 0 only (as in MMEngine) and returns the visualizer, for chained calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from runnerx.utils.errors import ValueAssertionError

from .drawing_canvas import CanvasMixin, Colors, draws
from .drawing_utils import (
    NUMBER,
    as_array,
    check_type,
    matplotlib_colors,
    per_item,
    points_array,
    tensor2ndarray,
)


class DrawingMixin(CanvasMixin):
    """The drawing methods of :class:`~runnerx.logging.Visualizer`, with MMEngine's
    arguments and defaults. Colours are matplotlib names (``'red'``, ``'g'``) or RGB tuples
    of 0-255 values, one for all items or a list with one per item."""

    @draws
    def draw_points(
        self,
        positions: Any,
        colors: Colors = "g",
        marker: str | None = None,
        sizes: Any = None,
    ) -> Any:
        """Draw points at ``positions`` (N x 2 of x, y) with a matplotlib ``marker`` and
        ``sizes`` (in points squared): one number for all points, or a list, an array or a
        tensor with one per point."""
        points = points_array(positions, "positions", 2)
        sizes = tensor2ndarray(sizes)
        if sizes is not None:
            check_type(sizes, (*NUMBER, list, tuple, np.ndarray), "sizes")
        self.ax_save.scatter(
            points[:, 0],
            points[:, 1],
            c=matplotlib_colors(colors, "colors"),
            s=sizes,
            marker=marker,
        )

    @draws
    def draw_texts(
        self,
        texts: str | list[str],
        positions: Any,
        font_sizes: Any = None,
        colors: Colors = "g",
        vertical_alignments: str | list[str] = "top",
        horizontal_alignments: str | list[str] = "left",
        font_families: str | list[str] = "sans-serif",
        bboxes: dict | list[dict] | None = None,
        font_properties: Any = None,
    ) -> Any:
        """Draw ``texts`` at ``positions`` (N x 2 of x, y). ``font_sizes`` default to
        ``max(sqrt(H * W) // 90, 10)``; ``bboxes`` are matplotlib ``FancyBboxPatch``
        settings drawn around the texts (``dict(facecolor='black', alpha=0.8)``);
        ``font_properties`` are matplotlib ``FontProperties`` (a font file, for example)."""
        from matplotlib.font_manager import FontProperties

        check_type(texts, (str, list), "texts")
        texts = [texts] if isinstance(texts, str) else texts
        count = len(texts)
        points = points_array(positions, "positions", 2)
        if len(points) != count:
            raise ValueAssertionError(
                f"`positions` should have the shape of ({count}, 2) for {count} texts, but "
                f"got {tuple(points.shape)}"
            )
        self._warn_outside(points, "text")
        if font_sizes is None:
            font_sizes = self._default_font_size
        sizes = per_item(font_sizes, NUMBER, count, "font_sizes")
        text_colors = matplotlib_colors(per_item(colors, (str, tuple), count, "colors"), "colors")
        vertical = per_item(vertical_alignments, (str,), count, "vertical_alignments")
        horizontal = per_item(horizontal_alignments, (str,), count, "horizontal_alignments")
        families = per_item(font_families, (str,), count, "font_families")
        boxes = [None] * count if bboxes is None else per_item(bboxes, (dict,), count, "bboxes")
        properties = (
            [None] * count
            if font_properties is None
            else per_item(font_properties, (FontProperties,), count, "font_properties")
        )
        for index, ((x, y), text) in enumerate(zip(points.tolist(), texts)):
            self.ax_save.text(
                x,
                y,
                text,
                size=sizes[index],
                bbox=boxes[index],
                verticalalignment=vertical[index],
                horizontalalignment=horizontal[index],
                family=families[index],
                fontproperties=properties[index],
                color=text_colors[index],
            )

    @draws
    def draw_lines(
        self,
        x_datas: Any,
        y_datas: Any,
        colors: Colors = "g",
        line_styles: str | list[str] = "-",
        line_widths: Any = 2,
    ) -> Any:
        """Draw line segments from ``(x_datas[i][0], y_datas[i][0])`` to
        ``(x_datas[i][1], y_datas[i][1])`` (N x 2 each, or 2 for one line)."""
        from matplotlib.collections import LineCollection

        xs = points_array(x_datas, "x_datas", 2)
        ys = points_array(y_datas, "y_datas", 2)
        if xs.shape != ys.shape:
            raise ValueAssertionError(
                f"`x_datas` and `y_datas` should have the same shape, but got "
                f"{tuple(xs.shape)} and {tuple(ys.shape)}"
            )
        lines = np.stack([xs, ys], axis=-1)  # N x 2 points x (x, y)
        self._warn_outside(lines, "line")
        self.ax_save.add_collection(
            LineCollection(
                lines.tolist(),
                colors=matplotlib_colors(colors, "colors"),
                linestyles=line_styles,
                linewidths=line_widths,
            )
        )

    @draws
    def draw_circles(
        self,
        center: Any,
        radius: Any,
        edge_colors: Colors = "g",
        line_styles: str | list[str] = "-",
        line_widths: Any = 2,
        face_colors: Colors = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw circles around ``center`` (N x 2 of x, y) of ``radius`` (N); line widths are
        kept within 1 and a quarter of the default font size, as in MMEngine."""
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Circle

        centers = points_array(center, "center", 2)
        radii = as_array(radius, "radius").reshape(-1)
        if len(radii) != len(centers):
            raise ValueAssertionError(
                f"`center` should have the shape of ({len(radii)}, 2), one per radius, but "
                f"got {tuple(centers.shape)}"
            )
        extent = np.stack([radii, radii], axis=1)
        self._warn_outside(np.concatenate([centers - extent, centers + extent]), "circle")
        circles = [Circle(tuple(xy), r) for xy, r in zip(centers.tolist(), radii.tolist())]
        self.ax_save.add_collection(
            PatchCollection(
                circles,
                alpha=alpha,
                facecolors=matplotlib_colors(face_colors, "face_colors"),
                edgecolors=matplotlib_colors(edge_colors, "edge_colors"),
                linewidths=self._line_widths(line_widths, len(circles)),
                linestyles=line_styles,
            )
        )

    @draws
    def draw_bboxes(
        self,
        bboxes: Any,
        edge_colors: Colors = "g",
        line_styles: str | list[str] = "-",
        line_widths: Any = 2,
        face_colors: Colors = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw boxes given as N x 4 ``(x1, y1, x2, y2)`` (or 4 for one box)."""
        boxes = points_array(bboxes, "bboxes", 4)
        if not ((boxes[:, 0] <= boxes[:, 2]).all() and (boxes[:, 1] <= boxes[:, 3]).all()):
            raise ValueAssertionError("`bboxes` should be (x1, y1, x2, y2) with x1 <= x2, y1 <= y2")
        self._warn_outside(boxes.reshape(-1, 2, 2), "bbox")
        corners = boxes[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
        self._add_polygons(list(corners), edge_colors, line_styles, line_widths, face_colors, alpha)

    @draws
    def draw_polygons(
        self,
        polygons: Any,
        edge_colors: Colors = "g",
        line_styles: str | list[str] = "-",
        line_widths: Any = 2,
        face_colors: Colors = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw polygons: an M x 2 array of (x, y) corners, or a list of them."""
        check_type(polygons, (list, np.ndarray, torch.Tensor), "polygons")
        polygons = polygons if isinstance(polygons, list) else [polygons]
        polygons = [points_array(polygon, "polygons", 2) for polygon in polygons]
        for polygon in polygons:
            self._warn_outside(polygon, "polygon")
        self._add_polygons(polygons, edge_colors, line_styles, line_widths, face_colors, alpha)
