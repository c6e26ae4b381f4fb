"""MiniDet: backbone + a head predicting one box and one class per image."""

import torch
import torch.nn.functional as F
from torch import nn

from minidet.registry import MODELS
from runnerx.model import BaseModel, BaseModule
from runnerx.structures import BaseDataElement, InstanceData


@MODELS.register_module()
class BoxClsHead(BaseModule):
    """Pooled features -> class logits and a box (x1, y1, x2, y2) relative to the image."""

    def __init__(
        self, in_channels=32, feat_size=8, num_classes=3, loss_bbox_weight=5.0, init_cfg=None
    ):
        super().__init__(init_cfg=init_cfg)
        self.cls = nn.Linear(in_channels, num_classes)
        self.box = nn.Linear(in_channels * feat_size * feat_size, 4)
        self.loss_bbox_weight = loss_bbox_weight

    def forward(self, feats):
        return self.cls(feats.amax((2, 3))), self.box(feats.flatten(1)).sigmoid()

    def loss(self, feats, data_samples, img_size):
        logits, boxes = self(feats)
        labels = torch.cat([s.gt_instances.labels for s in data_samples])
        targets = torch.cat([s.gt_instances.bboxes for s in data_samples]) / img_size
        return dict(
            loss_cls=F.cross_entropy(logits, labels),
            loss_bbox=self.loss_bbox_weight * F.l1_loss(boxes, targets),
        )

    def predict(self, feats, data_samples, img_size):
        logits, boxes = self(feats)
        scores, labels = logits.softmax(-1).max(-1)
        for sample, box, score, label in zip(data_samples, boxes * img_size, scores, labels):
            sample.pred_instances = InstanceData(
                bboxes=box[None], scores=score[None], labels=label[None]
            )
        return data_samples


@MODELS.register_module()
class MiniDet(BaseModel):
    """The detector; ``mode`` is MMEngine's: 'loss', 'predict' or 'tensor'."""

    def __init__(self, backbone, head, data_preprocessor=None, init_cfg=None):
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        self.backbone = MODELS.build(backbone)
        self.head = MODELS.build(head)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        feats = self.backbone(inputs)
        img_size = inputs.shape[-1]
        if mode == "loss":
            return self.head.loss(feats, data_samples, img_size)
        if mode == "predict":
            if data_samples is None:
                data_samples = [BaseDataElement() for _ in range(len(inputs))]
            return self.head.predict(feats, data_samples, img_size)
        return self.head(feats)
