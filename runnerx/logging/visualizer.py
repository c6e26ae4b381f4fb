"""Visualizer: hands a run's scalars, images and config to every visualization backend, and
draws on images with MMEngine's drawing API (:mod:`runnerx.logging.drawing`).

.. code-block:: python

    visualizer = dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend')])

The Runner builds it with ``save_dir=<log_dir>``; backends built from dicts then write into
``<log_dir>/vis_data``.
"""

from __future__ import annotations

import inspect
import os
import warnings
from collections.abc import Mapping
from typing import Any

from runnerx.config.config_dict import keyed_copy
from runnerx.dist import master_only
from runnerx.registry import VISBACKENDS, VISUALIZERS
from runnerx.utils.errors import ValueRuntimeError
from runnerx.utils.manager import ManagerMixin

from .drawing import DrawingMixin
from .featmap import draw_featmap
from .vis_backends import BaseVisBackend, exit_code


@VISUALIZERS.register_module()
class Visualizer(DrawingMixin, ManagerMixin):
    """Records a run's scalars, config and images in its backends (on rank 0 only), and
    draws boxes, texts, masks and heatmaps on images with MMEngine's drawing API.

    ``vis_backends`` is a backend config dict, a backend object, or a list of them; a dict
    may carry a ``name`` (default: its class name). A backend that needs a ``save_dir`` is
    skipped, with a warning, when neither its dict nor the Visualizer gives one. The newest
    Visualizer (or the running Runner's) is :meth:`get_current_instance`; before any exists,
    that is a RuntimeError, as in MMEngine.

    The arguments are MMEngine's, in its order, so that subclasses written for MMEngine
    (``super().__init__(name=name, image=image, vis_backends=..., save_dir=...)``) build.
    ``image`` is the first image to draw on (:meth:`set_image`); ``fig_save_cfg`` and
    ``fig_show_cfg`` are matplotlib ``Figure`` arguments for the figure drawn on and the
    window :meth:`show` opens (default ``dict(frameon=False)``). The drawing methods
    (``draw_bboxes``, ``draw_texts``, ..., ``get_image``) are :class:`DrawingMixin`'s;
    a subclass implements :meth:`add_datasample` with them.

    .. code-block:: python

        vis = Visualizer(vis_backends=[dict(type='LocalVisBackend')], save_dir='work_dirs/x')
        vis.add_scalars({'loss': 0.5, 'lr': 0.01}, step=10)
        vis.set_image(image)
        vis.draw_bboxes(np.array([[4, 4, 40, 30]]), edge_colors='r')
        vis.add_image('pred', vis.get_image(), step=10)
    """

    #: MMEngine's static ``Visualizer.draw_featmap`` (rank 0 only; None on the others)
    draw_featmap = staticmethod(master_only(draw_featmap))

    def __init__(
        self,
        name: str = "visualizer",
        image: Any = None,
        vis_backends: dict | BaseVisBackend | list | None = None,
        save_dir: str | os.PathLike | None = None,
        fig_save_cfg: dict | None = None,
        fig_show_cfg: dict | None = None,
    ) -> None:
        super().__init__(name)
        #: matplotlib ``Figure`` arguments of the figure drawn on and of show's window
        self.fig_save_cfg = {"frameon": False} if fig_save_cfg is None else fig_save_cfg
        self.fig_show_cfg = {"frameon": False} if fig_show_cfg is None else fig_show_cfg
        #: the dataset's ``metainfo`` (``classes``, ``palette``, ...) that subclasses draw
        #: with (MMEngine's attribute; its loops set it from the dataloader's dataset)
        self.dataset_meta: dict | None = None
        self._vis_backends: dict[str, BaseVisBackend] = {}
        backend_dir = None if save_dir is None else os.path.join(save_dir, "vis_data")
        if vis_backends is None:
            vis_backends = []
        elif isinstance(vis_backends, (dict, BaseVisBackend)):
            vis_backends = [vis_backends]
        for index, spec in enumerate(vis_backends):
            backend_name, backend = self._build_backend(spec, backend_dir, index)
            if backend is None:
                continue
            if backend_name in self._vis_backends:
                raise ValueRuntimeError(  # MMEngine: RuntimeError
                    f"visualizer.vis_backends[{index}]: a backend named {backend_name!r} "
                    "exists already; give each a different 'name'"
                )
            self._vis_backends[backend_name] = backend
        self._register_instance()
        if image is not None:
            self.set_image(image)

    @classmethod
    def get_instance(cls, name: str, **kwargs: Any) -> Visualizer:
        """The Visualizer called ``name`` (built with ``kwargs`` if new); it becomes current."""
        visualizer = super().get_instance(name, **kwargs)
        visualizer.make_current()
        return visualizer

    @property
    def vis_backends(self) -> dict[str, BaseVisBackend]:
        """The backends by name."""
        return self._vis_backends

    def get_backend(self, name: str) -> BaseVisBackend | None:
        """The backend called ``name`` (its class name unless the config named it)."""
        return self._vis_backends.get(name)

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the run's config in every backend."""
        for backend in self._vis_backends.values():
            backend.add_config(config, **kwargs)

    @master_only
    def add_graph(self, model: Any, data_batch: Any, **kwargs: Any) -> None:
        """Record the model's graph in every backend that can (``WandbVisBackend`` watches
        the model with its ``watch_kwargs``; the others do nothing)."""
        for backend in self._vis_backends.values():
            backend.add_graph(model, data_batch, **kwargs)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0) -> None:
        """Record an image (H x W x 3 RGB, uint8) at ``step`` in every backend: a PNG file
        with ``LocalVisBackend``, an image summary with TensorBoard, ..."""
        for backend in self._vis_backends.values():
            backend.add_image(name, image, step)

    @master_only
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar at ``step`` in every backend."""
        for backend in self._vis_backends.values():
            backend.add_scalar(name, value, step, **kwargs)

    @master_only
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """Record several scalars at ``step`` in every backend (``file_path``: an extra
        JSON-lines file, relative to the save dir, for backends that write files)."""
        if not isinstance(scalar_dict, Mapping):  # before any backend has written a line
            raise TypeError(
                "Visualizer.add_scalars: scalar_dict must be a dict of name -> value "
                f"(e.g. {{'loss': 0.5}}), got {type(scalar_dict).__name__}"
            )
        for backend in self._vis_backends.values():
            backend.add_scalars(scalar_dict, step, file_path, **kwargs)

    @master_only
    def add_datasample(
        self,
        name: str,
        image: Any,
        data_sample: Any = None,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: float = 0,
        step: int = 0,
    ) -> None:
        """Draw a data sample's annotations and predictions on ``image`` and record it: does
        nothing here, as in MMEngine; task visualizers (mmdet's ``DetLocalVisualizer``, ...)
        implement it with ``set_image``, the ``draw_*`` methods, ``get_image`` and
        ``add_image`` (or ``show`` when ``show=True``)."""

    @master_only
    def mark_failed(self, error: BaseException) -> None:
        """Tell every backend that the run ended with ``error``, so that the next
        :meth:`close` records it as failed where the tracker can (MLflow status FAILED,
        W&B exit code 1, ClearML's failed state). The Runner calls it before ``close`` when
        an exception leaves ``train``, ``val`` or ``test``; ``close`` keeps MMEngine's
        signature."""
        if not exit_code(error):  # SystemExit(0): a clean exit
            return
        for backend in self._vis_backends.values():
            backend.mark_failed(error)

    @master_only
    def close(self) -> None:
        """Close every backend (flushes TensorBoard events)."""
        for backend in self._vis_backends.values():
            backend.close()

    @staticmethod
    def _build_backend(
        spec: Any, backend_dir: str | None, index: int
    ) -> tuple[str, BaseVisBackend | None]:
        if isinstance(spec, BaseVisBackend):
            return type(spec).__name__, spec
        if not isinstance(spec, dict):
            raise TypeError(
                f"visualizer.vis_backends[{index}] must be a backend config dict or a "
                f"BaseVisBackend, got {type(spec).__name__}"
            )
        spec = keyed_copy(spec, f"visualizer.vis_backends[{index}]")  # named so in errors
        name = spec.pop("name", None)
        if spec.get("save_dir") is None and backend_dir is not None:
            spec["save_dir"] = backend_dir
        elif spec.get("save_dir") is None and _needs_save_dir(spec.get("type")):
            warnings.warn(
                f"visualizer.vis_backends[{index}] ({spec.get('type')}) is skipped: it needs "
                "a save_dir and the Visualizer has none",
                stacklevel=3,
            )
            return "", None
        backend = VISBACKENDS.build(spec)
        return name or type(backend).__name__, backend


def _needs_save_dir(backend_type: Any) -> bool:
    """Whether the backend class takes a ``save_dir`` without a default."""
    cls = VISBACKENDS.get(backend_type) if isinstance(backend_type, str) else backend_type
    parameter = inspect.signature(cls).parameters.get("save_dir") if cls else None
    return parameter is not None and parameter.default is inspect.Parameter.empty
