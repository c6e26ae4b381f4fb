"""NaiveVisualizationHook: draws the test samples with the Visualizer's ``add_datasample``."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from runnerx.dist import is_main_process
from runnerx.hooks.hook import Hook
from runnerx.logging.featmap import resize_image
from runnerx.registry import HOOKS
from runnerx.utils.dl_utils import tensor2imgs

__all__ = ["NaiveVisualizationHook"]

_NORM_KEYS = ("mean", "std", "to_bgr", "to_rgb")


@HOOKS.register_module()
class NaiveVisualizationHook(Hook):
    """Hands the model to ``visualizer.add_graph`` when training starts, and after every
    ``interval`` test iterations turns each input of the batch back into an image and calls
    ``visualizer.add_datasample(name, image, data_sample, draw_gt, draw_pred, step)`` (the
    base Visualizer draws nothing there; a task visualizer such as mmdet's does)::

        custom_hooks = [dict(type='NaiveVisualizationHook', interval=10)]

    The batch is either runnerx's (and MMEngine's) dict, ``dict(inputs=images,
    data_samples=[...])`` with ``images`` an ``N x C x H x W`` tensor or a list of
    ``C x H x W`` ones, or MMEngine's older list of per-sample dicts with ``'inputs'`` and
    ``'data_sample'``. Plain-dict data samples, which collating turns into one dict of
    per-sample lists (``data_samples=dict(img_path=[...])``), are split back into one dict
    per sample. There must be one data sample per input, and ``test_step`` must return one
    output per sample.

    Each image is restored from a sample's metainfo, as MMEngine does: ``img_norm_cfg``
    (``mean``/``std``, undone with ``tensor2imgs``), then the padding cut off (when
    ``pad_shape`` is set: to ``scale`` (w, h), else ``img_shape``, else the original size)
    and the image resized (bilinear) to the original size, ``ori_shape`` or
    ``ori_height``/``ori_width``; without those it is drawn at its input size. The name is
    the file name of ``img_path``, else ``test_img_<i>`` (``i``: its place in the batch);
    the step is the test iteration. ``show=True`` (``tools/test.py --show``) also passes
    ``show=True, wait_time=wait_time`` to ``add_datasample``, which then shows each image in a
    window for ``wait_time`` seconds (0: until it is closed).

    Where this differs from MMEngine's hook, which its authors mark as not working with the
    current Visualizer: the images are RGB uint8, as ``add_datasample`` takes them (MMEngine
    hands over float BGR; ``img_norm_cfg`` may say ``to_bgr=True`` for BGR, or mmcv's
    ``to_rgb=False`` for a BGR tensor); ``data_sample`` is the model's output for the sample
    (which carries the predictions and, in OpenMMLab's tasks, the ground truth), where
    MMEngine passes the input sample and the output into the ``draw_gt``/``draw_pred`` slots;
    the step is given (MMEngine's is always 0, so each file was overwritten); nothing is
    drawn on ranks other than 0, where the Visualizer would not record it anyway.
    """

    priority = "NORMAL"

    def __init__(
        self,
        interval: int = 1,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: float = 0.0,
    ) -> None:
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 1:
            raise ValueError(
                f"NaiveVisualizationHook: interval must be a positive int (draw every "
                f"interval-th test batch), got {interval!r}"
            )
        self._interval = interval
        self.draw_gt = draw_gt
        self.draw_pred = draw_pred
        self.show = show
        self.wait_time = wait_time

    def before_train(self, runner: Any) -> None:
        """Record the model's graph in the visualizer's backends."""
        runner.visualizer.add_graph(runner.model, None)

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Draw every sample of the batch when ``batch_idx`` ends one of every ``interval``."""
        if not self.every_n_inner_iters(batch_idx, self._interval) or not is_main_process():
            return
        inputs, data_samples = _split_batch(data_batch)
        # only when set: visualizers written without these arguments keep working
        shown = {"show": True, "wait_time": self.wait_time} if self.show else {}
        if not isinstance(outputs, Sequence) or len(outputs) != len(inputs):
            raise TypeError(
                "NaiveVisualizationHook: test_step should return a list with one output per "
                f"sample ({len(inputs)} in this batch), got "
                + (
                    f"{len(outputs)} outputs"
                    if isinstance(outputs, Sequence)
                    else type(outputs).__name__
                )
            )
        for index, (image, data_sample, output) in enumerate(zip(inputs, data_samples, outputs)):
            img_path = _meta(data_sample, "img_path")
            name = os.path.basename(img_path) if img_path else f"test_img_{index}"
            runner.visualizer.add_datasample(
                name,
                restore_image(image, data_sample),
                data_sample=output,
                draw_gt=self.draw_gt,
                draw_pred=self.draw_pred,
                step=batch_idx,
                **shown,
            )


def restore_image(image: torch.Tensor, data_sample: Any = None) -> np.ndarray:
    """A network input (``C x H x W``, or ``1 x C x H x W``) as the H x W x C uint8 image it
    came from, undoing the sample's ``img_norm_cfg``, padding and resize (see
    :class:`NaiveVisualizationHook`)."""
    if not isinstance(image, torch.Tensor) or image.ndim not in (3, 4):
        raise TypeError(
            "NaiveVisualizationHook: each sample's 'inputs' should be a C x H x W image "
            f"tensor, got {_describe(image)}"
        )
    norm_cfg = dict(_meta(data_sample, "img_norm_cfg") or {})
    unknown = sorted(set(norm_cfg) - set(_NORM_KEYS))
    if unknown:
        raise ValueError(
            f"NaiveVisualizationHook: the data sample's img_norm_cfg has {unknown}; it may "
            f"hold {list(_NORM_KEYS)}"
        )
    to_bgr = norm_cfg.pop("to_bgr", not norm_cfg.pop("to_rgb", True))
    batch = image.float() if image.ndim == 4 else image.float()[None]
    array = tensor2imgs(batch, to_bgr=to_bgr, **norm_cfg)[0]

    original = _original_size(data_sample)
    if _meta(data_sample, "pad_shape") is not None:
        scale = _meta(data_sample, "scale")
        img_shape = _meta(data_sample, "img_shape")
        if scale is not None:
            height, width = scale[1], scale[0]
        elif img_shape is not None:
            height, width = img_shape[:2]
        else:
            height, width = original or array.shape[:2]
        array = array[: int(height), : int(width)]
    if original is not None and array.shape[:2] != original:
        return resize_image(array, original)
    return np.clip(np.rint(array), 0, 255).astype(np.uint8)


def _split_batch(data_batch: Any) -> tuple[list, list]:
    """The batch's images and data samples, one of each per sample."""
    if isinstance(data_batch, Mapping) and "inputs" in data_batch:
        inputs = data_batch["inputs"]
        images = list(inputs) if isinstance(inputs, (torch.Tensor, Sequence)) else [inputs]
        samples = data_batch.get("data_samples")
        if samples is None:
            return images, [None] * len(images)
        if isinstance(samples, Mapping):
            return images, _unbatch(samples, len(images), "data_samples")
        samples = list(samples)
        if len(samples) != len(images):
            raise TypeError(
                f"NaiveVisualizationHook: the test batch has {len(images)} inputs but "
                f"{len(samples)} data_samples; it needs one data sample per input"
            )
        return images, samples
    if isinstance(data_batch, Sequence) and all(
        isinstance(sample, Mapping) and "inputs" in sample for sample in data_batch
    ):
        samples = [sample.get("data_sample", sample.get("data_samples")) for sample in data_batch]
        return [sample["inputs"] for sample in data_batch], samples
    raise TypeError(
        "NaiveVisualizationHook: the test batch should be dict(inputs=..., data_samples=[...]) "
        f"or a list of dicts with 'inputs' and 'data_sample', got {_describe(data_batch)}"
    )


def _unbatch(collated: Any, count: int, where: str) -> list:
    """The ``count`` per-sample values that ``pseudo_collate`` (the default collate_fn) made
    ``collated`` from: a dict of lists is split into one dict per sample,
    ``{'img_path': ['a.png', 'b.png']}`` -> ``[{'img_path': 'a.png'}, {'img_path': 'b.png'}]``,
    and a per-sample tuple, which collating turns into one entry per position, is put back
    together (``mean=[(1, 1), (2, 2)]`` -> ``mean=(1, 2)`` in each sample)."""
    if isinstance(collated, Mapping):
        columns = {
            key: _unbatch(value, count, f"{where}[{key!r}]") for key, value in collated.items()
        }
        return [{key: column[index] for key, column in columns.items()} for index in range(count)]
    sequence = isinstance(collated, Sequence) and not isinstance(collated, (str, bytes))
    if sequence and all(isinstance(entry, (Mapping, list, tuple)) for entry in collated):
        positions = [
            _unbatch(entry, count, f"{where}[{position}]")
            for position, entry in enumerate(collated)
        ]
        return [tuple(values[index] for values in positions) for index in range(count)]
    batched = sequence or (isinstance(collated, torch.Tensor) and collated.ndim > 0)
    if batched and len(collated) == count:
        return list(collated)
    raise TypeError(
        f"NaiveVisualizationHook: the test batch's data_samples is a dict, so each of its "
        f"values should hold one entry per input ({count} in this batch), but {where} is "
        + _describe(collated)
        + (f" of length {len(collated)}" if batched else "")
        + "; return one data sample per input from the dataset and keep the default "
        "collate_fn (pseudo_collate), or have the collate_fn return a list of data samples"
    )


def _meta(data_sample: Any, key: str) -> Any:
    """``data_sample.get(key)`` for a data element or a dict; None for anything else."""
    getter = getattr(data_sample, "get", None)
    return getter(key) if callable(getter) else None


def _original_size(data_sample: Any) -> tuple[int, int] | None:
    """The image's (H, W) before the pipeline: ``ori_shape``, or MMEngine's
    ``ori_height``/``ori_width``; None when the sample has neither."""
    ori_shape = _meta(data_sample, "ori_shape")
    if ori_shape is not None:
        return int(ori_shape[0]), int(ori_shape[1])
    height, width = _meta(data_sample, "ori_height"), _meta(data_sample, "ori_width")
    return None if height is None or width is None else (int(height), int(width))


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    return type(value).__name__ + ("" if shape is None else f" of shape {tuple(shape)}")
