"""``Visualizer.show``: an image in a matplotlib or OpenCV window, waiting for a key.

Without a display (matplotlib's Agg backend, a headless OpenCV) nothing can be shown: the
image is not shown, a warning says so and ``show`` returns at once instead of waiting for a
key that cannot come (MMEngine waits forever there when ``wait_time`` is 0).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .drawing_utils import import_matplotlib

_NO_DISPLAY = "nothing is shown; record the image with visualizer.add_image(name, image, step)"


def show_image(
    visualizer: Any,
    image: np.ndarray,
    win_name: str,
    wait_time: float,
    continue_key: str,
    backend: str,
) -> Any:
    """Show ``image`` with ``backend`` ('matplotlib' or 'cv2') as ``Visualizer.show`` does;
    the matplotlib window is kept as ``visualizer.manager`` and reused."""
    if backend == "matplotlib":
        return _show_in_matplotlib(visualizer, image, win_name, wait_time, continue_key)
    if backend == "cv2":
        _show_in_opencv(visualizer, image, win_name, wait_time)
        return None
    raise ValueError(f"show: `backend` should be 'matplotlib' or 'cv2', but got {backend!r}")


def _show_in_matplotlib(
    visualizer: Any, image: np.ndarray, win_name: str, wait_time: float, continue_key: str
) -> Any:
    import_matplotlib()
    import matplotlib.pyplot as plt
    from matplotlib.backend_bases import FigureCanvasBase

    manager = _window(visualizer, win_name)
    figure = manager.canvas.figure
    figure.clear()
    figure.subplots_adjust(left=0, right=1, bottom=0, top=1)
    axes = figure.add_subplot()
    axes.axis(False)
    axes.imshow(image)
    manager.canvas.draw()
    backend = plt.get_backend()
    if "inline" in backend:
        return figure  # a notebook shows the figure a cell returns
    # canvases that can show a window run their own event loop; Agg's base one only sleeps
    if type(manager.canvas).start_event_loop is FigureCanvasBase.start_event_loop:
        warnings.warn(
            f"Visualizer.show: matplotlib's backend {backend!r} has no window (no display): "
            f"{_NO_DISPLAY}",
            UserWarning,
            stacklevel=4,
        )
        return None
    wait_for_key(figure, wait_time, continue_key)
    return None


def _window(visualizer: Any, win_name: str) -> Any:
    from matplotlib.figure import Figure
    from matplotlib.pyplot import new_figure_manager

    manager = getattr(visualizer, "manager", None)
    if manager is not None:
        try:
            manager.set_window_title(win_name)
            return manager
        except Exception:  # the user closed the window: open a new one
            pass
    manager = new_figure_manager(num=1, FigureClass=Figure, **visualizer.fig_show_cfg)
    manager.set_window_title(win_name)
    visualizer.manager = manager
    return manager


def wait_for_key(figure: Any, timeout: float, continue_key: str) -> bool:
    """Wait until ``continue_key`` is pressed, ``timeout`` seconds pass (0: no limit) or the
    window is closed (then True)."""
    from matplotlib.backend_bases import CloseEvent

    canvas = figure.canvas
    if canvas.manager is not None:  # a pyplot figure: bring its window up
        figure.show()
    while True:
        events: list = []

        def stop(event: Any, events: list = events) -> None:
            events.append(event)
            canvas.stop_event_loop()

        connections = [
            canvas.mpl_connect(kind, stop) for kind in ("key_press_event", "close_event")
        ]
        try:
            canvas.start_event_loop(timeout)
        finally:
            for connection in connections:
                canvas.mpl_disconnect(connection)
        # some backends send a key and a close together: the close wins
        if any(isinstance(event, CloseEvent) for event in events):
            return True
        if not events or events[0].key == continue_key:
            return False


def _show_in_opencv(visualizer: Any, image: np.ndarray, win_name: str, wait_time: float) -> None:
    try:
        import cv2
    except ImportError:
        raise ImportError(
            "show(backend='cv2') needs OpenCV: pip install opencv-python (or show with "
            "backend='matplotlib')"
        ) from None
    window = str(id(visualizer))  # one window per visualizer, retitled with win_name
    try:
        cv2.namedWindow(window)
        cv2.setWindowTitle(window, win_name)
        # OpenCV shows BGR (MMEngine hands it RGB, swapping red and blue)
        cv2.imshow(window, np.ascontiguousarray(image[..., ::-1]))
        cv2.waitKey(int(np.ceil(wait_time * 1000)))
    except cv2.error as error:
        warnings.warn(
            f"Visualizer.show: OpenCV cannot open a window ({str(error).strip()[:200]}): "
            f"{_NO_DISPLAY}",
            UserWarning,
            stacklevel=4,
        )
