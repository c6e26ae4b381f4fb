"""Visualization backends: where the Visualizer sends scalars and the config.

``visualizer=dict(type='Visualizer', vis_backends=[dict(type='LocalVisBackend'),
dict(type='TensorboardVisBackend')])``. Each backend writes on rank 0 only; the others
return at once.
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Any, NamedTuple

from runnerx.dist import master_only
from runnerx.fileio.atomic import atomic_write
from runnerx.registry import VISBACKENDS
from runnerx.utils.errors import ValueAssertionError


def _config_text(config: Any) -> str:
    """A Config's (or a plain dict's) readable Python text."""
    if isinstance(config, dict):
        from runnerx.config import Config

        config = Config(config)
    return config.pretty_text


class BaseVisBackend:
    """A place scalars and the config go to; subclasses override what they support."""

    #: how the run failed, once :meth:`mark_failed` was told (``close`` forgets it)
    _failure: RunFailure | None = None

    def __init__(self, save_dir: str | os.PathLike | None = None) -> None:
        self._save_dir = None if save_dir is None else os.fspath(save_dir)

    @property
    def save_dir(self) -> str | None:
        """The folder this backend writes into."""
        return self._save_dir

    @property
    def experiment(self) -> Any:
        """The underlying writer (the backend itself unless a subclass has a real one)."""
        return self

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the run's config."""

    def add_graph(self, model: Any, data_batch: Any, **kwargs: Any) -> None:
        """Record the model's graph (MMEngine's hook point; most backends do nothing)."""

    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Record an image (H x W x 3 RGB, uint8) at ``step``."""

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar at ``step`` (by default: ``add_scalars({name: value}, step)``)."""
        self.add_scalars({name: value}, step)

    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """Record several scalars at ``step``."""

    def mark_failed(self, error: BaseException) -> None:
        """Note that the run ended with ``error``; :meth:`close` then records the failure
        where the tracker has a run status (the Runner calls this before ``close`` when an
        exception leaves ``train``/``val``/``test``). A ``SystemExit`` with code 0 is no
        failure. Only the exit code and the error's text are kept: the error's traceback
        would keep the failed run's objects (its dataloader workers, say) alive."""
        code = exit_code(error)
        self._failure = RunFailure(code, f"{type(error).__name__}: {error}") if code else None

    def close(self) -> None:
        """Flush and release what the backend holds open."""

    def _take_failure(self) -> RunFailure | None:
        """For ``close``: how the run failed (None: it did not), forgotten, so that a run
        started by a later write begins without it."""
        failure, self._failure = self._failure, None
        return failure


class RunFailure(NamedTuple):
    """How a run failed, as a tracker records it: ``tools/train.py``'s exit code (130 after
    Ctrl-C) and ``'ValueError: <message>'``."""

    exit_code: int
    reason: str


#: the exit status after Ctrl-C (a KeyboardInterrupt), as ``tools/train.py`` exits
INTERRUPTED = 130


def exit_code(error: BaseException | None) -> int:
    """The exit status of a run that ended with ``error``, as ``tools/train.py`` exits: 0
    without one, 130 after Ctrl-C, a ``SystemExit``'s own code, else 1."""
    if error is None:
        return 0
    if isinstance(error, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(error, SystemExit) and (error.code is None or isinstance(error.code, int)):
        return error.code or 0
    return 1


class ScalarWiseVisBackend(BaseVisBackend):
    """A backend whose store takes one scalar at a time: ``add_scalars`` hands each value to
    ``add_scalar`` (which subclasses define) at ``step``; a 'step' key is the step, not a
    scalar."""

    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """``add_scalar`` for each value at ``step``, or at the dict's 'step' entry when it has
        one (as LocalVisBackend records it; MMEngine's TensorBoard and ClearML backends assert
        there is none)."""
        step = scalar_dict.get("step", step)
        for name, value in scalar_dict.items():
            if name != "step":
                self.add_scalar(name, value, step)


@VISBACKENDS.register_module()
class LocalVisBackend(BaseVisBackend):
    """Scalars as JSON lines in ``<save_dir>/scalars.json``; the config as a .py file;
    images as ``<save_dir>/vis_image/<name>_<step>.png``.

    Each line is one ``add_scalars`` call with its step: ``{"lr": 0.01, "loss": 2.3,
    "step": 10}``. Every write is appended and flushed on its own, so a crash loses nothing
    already logged. Through the Visualizer, ``save_dir`` is ``<log_dir>/vis_data``. The
    arguments are MMEngine's, in its order.
    """

    def __init__(
        self,
        save_dir: str | os.PathLike,
        img_save_dir: str = "vis_image",
        config_save_file: str = "config.py",
        scalar_save_file: str = "scalars.json",
    ) -> None:
        super().__init__(save_dir)
        if not scalar_save_file.endswith(".json"):
            raise ValueAssertionError(
                f"scalar_save_file must end with .json, got {scalar_save_file!r}"
            )
        if not config_save_file.endswith(".py"):  # the config is written as Python text
            raise ValueAssertionError(
                f"config_save_file must end with .py, got {config_save_file!r}"
            )
        self._scalar_path = os.path.join(self._save_dir, scalar_save_file)
        self._config_path = os.path.join(self._save_dir, config_save_file)
        self._image_dir = os.path.join(self._save_dir, img_save_dir)
        self._files: dict[str, Any] = {}

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Write the config's text to ``config_save_file`` (whole or not at all: a failed
        write, on a full disk say, names the file and leaves none)."""
        text = _config_text(config)
        with atomic_write(self._config_path) as file:
            file.write(text)

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Write ``image`` (H x W x 3 RGB, uint8, as MMEngine takes it; a grey or RGBA image,
        a float image in [0, 1] and tensors are taken too) to ``vis_image/<name>_<step>.png``."""
        from .png import image_array, write_png

        array = image_array(image, f"LocalVisBackend.add_image({name!r})")
        write_png(os.path.join(self._image_dir, f"{name}_{step}.png"), array)

    @master_only
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: str | None = None, **kwargs: Any
    ) -> None:
        """Append the scalars with their step; also to ``<save_dir>/<file_path>`` if given
        (LoggerHook gives ``<timestamp>.json``, so both files hold the logged lines, as in
        MMEngine)."""
        record = {**scalar_dict}
        record.setdefault("step", step)
        line = json.dumps(record, default=_json_value) + "\n"
        if file_path is not None:
            extra_path = os.path.join(self._save_dir, file_path)
            if not file_path.endswith(".json") or extra_path == self._scalar_path:
                raise ValueAssertionError(
                    f"file_path must be a .json file other than the scalar file, got {file_path!r}"
                )
            self._append(line, extra_path)
        self._append(line, self._scalar_path)

    def _append(self, line: str, path: str) -> None:
        file = self._files.get(path)
        if file is None:  # opened once and kept open: reopening per line costs the loop
            os.makedirs(os.path.dirname(path), exist_ok=True)
            file = self._files[path] = open(path, "a", encoding="utf-8")  # noqa: SIM115
        file.write(line)
        file.flush()  # in the operating system's hands: a crash of the process loses nothing

    def close(self) -> None:
        """Close the files written so far."""
        for file in self._files.values():
            file.close()
        self._files.clear()


@VISBACKENDS.register_module()
class TensorboardVisBackend(ScalarWiseVisBackend):
    """Scalars and the config as TensorBoard events in ``save_dir``.

    The ``SummaryWriter`` is created on first use; it needs the ``tensorboard`` package
    (``pip install tensorboard``, or the ``runnerx[tensorboard]`` extra). View with
    ``tensorboard --logdir work_dirs``.
    """

    def __init__(self, save_dir: str | os.PathLike) -> None:
        super().__init__(save_dir)
        self._writer: Any = None

    @property
    def experiment(self) -> Any:
        """The ``torch.utils.tensorboard.SummaryWriter`` (created on first use)."""
        if self._writer is None:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError as error:
                raise ImportError(
                    "TensorboardVisBackend needs the tensorboard package: "
                    "pip install tensorboard (or pip install 'runnerx[tensorboard]')"
                ) from error
            self._writer = SummaryWriter(self._save_dir)
        return self._writer

    @master_only
    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Write the config's text as the text summary 'config'."""
        self.experiment.add_text("config", _config_text(config))

    @master_only
    def add_image(self, name: str, image: Any, step: int = 0, **kwargs: Any) -> None:
        """Write an image summary (TensorBoard encodes it with Pillow)."""
        from .png import image_array

        array = image_array(image, f"TensorboardVisBackend.add_image({name!r})")
        formats = "HW" if array.ndim == 2 else "HWC"
        self.experiment.add_image(name, array, step, dataformats=formats)

    @master_only
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Write one scalar (anything that is not one number is skipped with a warning)."""
        number = _scalar_value("TensorboardVisBackend", name, value)
        if number is not None:
            self.experiment.add_scalar(name, number, step)

    @master_only
    def close(self) -> None:
        """Flush the events to disk and close the writer."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def _json_value(value: Any) -> Any:
    """What ``json`` cannot write itself: tensors and arrays as lists, the rest as text."""
    return value.tolist() if hasattr(value, "tolist") else str(value)


def _scalar_value(backend: str, name: str, value: Any) -> float | None:
    """``value`` as a float; None, with a warning naming the backend, when it is not one
    number (e.g. a confusion matrix among the metrics)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        warnings.warn(
            f"{backend} skips {name!r}: a scalar must be one number, got {type(value).__name__}",
            stacklevel=4,
        )
        return None
