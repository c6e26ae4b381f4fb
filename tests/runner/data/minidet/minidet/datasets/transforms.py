"""minidet's transforms (plain callables on a results dict)."""

import io

import numpy as np
import torch

from minidet.registry import TRANSFORMS
from runnerx.fileio import get
from runnerx.structures import BaseDataElement, InstanceData


@TRANSFORMS.register_module()
class LoadNpyImage:
    """Read ``results['img_path']`` (a .npy file, any backend) into ``results['img']``."""

    def __init__(self, backend_args=None):
        self.backend_args = backend_args

    def __call__(self, results):
        if "img" not in results:
            raw = get(results["img_path"], backend_args=self.backend_args)
            results["img"] = np.load(io.BytesIO(raw))
        results["ori_shape"] = results["img_shape"] = results["img"].shape[:2]
        return results


@TRANSFORMS.register_module()
class RandomHFlip:
    """Flip the image and its box left-right with probability ``prob``."""

    def __init__(self, prob=0.5):
        self.prob = prob

    def __call__(self, results):
        flip = bool(np.random.rand() < self.prob)
        results["flip"] = flip
        if flip:
            results["img"] = results["img"][:, ::-1].copy()
            if "gt_bbox" in results:
                width = results["img"].shape[1]
                x1, y1, x2, y2 = results["gt_bbox"]
                results["gt_bbox"] = [width - x2, y1, width - x1, y2]
        return results


@TRANSFORMS.register_module()
class PackMiniDetInputs:
    """Image to a C x H x W uint8 tensor; the box, label and meta into a data sample."""

    meta_keys = ("img_path", "ori_shape", "img_shape", "flip")

    def __call__(self, results):
        img = torch.from_numpy(np.ascontiguousarray(results["img"].transpose(2, 0, 1)))
        sample = BaseDataElement(metainfo={k: results[k] for k in self.meta_keys if k in results})
        if "gt_bbox" in results:
            sample.gt_instances = InstanceData(
                bboxes=torch.tensor([results["gt_bbox"]], dtype=torch.float32),
                labels=torch.tensor([results["gt_label"]]),
            )
        return dict(inputs=img, data_samples=sample)
