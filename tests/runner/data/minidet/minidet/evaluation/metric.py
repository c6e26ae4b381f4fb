"""Mean IoU of the predicted box with the true one, and class accuracy."""

import torch

from minidet.registry import METRICS
from runnerx.evaluator import BaseMetric


def box_area(boxes):
    """Areas of N x 4 (x1, y1, x2, y2) boxes."""
    return (boxes[:, 2:] - boxes[:, :2]).clamp(min=0).prod(1)


def box_iou(a, b):
    """IoU of matching rows of two N x 4 (x1, y1, x2, y2) tensors."""
    lt, rb = torch.maximum(a[:, :2], b[:, :2]), torch.minimum(a[:, 2:], b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(1)
    return inter / (box_area(a) + box_area(b) - inter)


@METRICS.register_module()
class BoxIoUAccuracy(BaseMetric):
    """``mIoU`` (in %) and ``accuracy`` (in %) over the dataset."""

    default_prefix = "toy"

    def process(self, data_batch, data_samples):
        for sample in data_samples:
            pred, gt = sample["pred_instances"], sample["gt_instances"]
            iou = box_iou(pred["bboxes"].cpu(), gt["bboxes"].cpu())[0]
            correct = pred["labels"].cpu()[0] == gt["labels"].cpu()[0]
            self.results.append((float(iou), bool(correct)))

    def compute_metrics(self, results):
        ious, correct = zip(*results)
        return dict(mIoU=100 * sum(ious) / len(ious), accuracy=100 * sum(correct) / len(correct))
