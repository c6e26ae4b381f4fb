"""What the test-time augmentation tests run, registered as a user's package would be (a
config loads it with ``custom_imports=dict(imports=['tests.model.tta_parts'])``): a tiny
classifier, a dataset of 4-feature vectors whose transforms can reverse the features, and a
TTA model that averages the views' scores."""

import torch
from torch import nn

from runnerx.data import BaseDataset
from runnerx.model import BaseModel, BaseTTAModel
from runnerx.registry import DATASETS, MODELS, TRANSFORMS
from runnerx.structures import BaseDataElement

NUM_SAMPLES = 10


def features(index):
    """Sample ``index``'s 4 features."""
    return torch.randn(4, generator=torch.Generator().manual_seed(100 + index))


@DATASETS.register_module()
class TtaVectors(BaseDataset):
    """10 samples, ``dict(features=[4 floats], label=index % 3)`` before the pipeline."""

    METAINFO = dict(classes=("a", "b", "c"))

    def load_data_list(self):
        return [
            dict(features=features(index).tolist(), label=index % 3, index=index)
            for index in range(NUM_SAMPLES)
        ]


@TRANSFORMS.register_module()
class TtaReverse:
    """Reverse the order of the features (the 'flip' of a vector) when ``reverse``."""

    def __init__(self, reverse):
        self.reverse = reverse

    def __call__(self, sample):
        if self.reverse:
            sample["features"] = list(reversed(sample["features"]))
        sample["reversed"] = self.reverse
        return sample


@TRANSFORMS.register_module()
class TtaPack:
    """``dict(inputs=Tensor[4], data_samples=BaseDataElement)``: the label as ``gt_label``,
    the sample's ``index`` and whether it was ``reversed`` as metainfo."""

    def __call__(self, sample):
        meta = dict(index=sample["index"], reversed=sample.get("reversed", False))
        data_sample = BaseDataElement(metainfo=meta, gt_label=sample["label"])
        return dict(inputs=torch.tensor(sample["features"]), data_samples=data_sample)


@MODELS.register_module()
class TtaTinyClassifier(BaseModel):
    """A linear layer over 4 features; ``'predict'`` gives one dict per sample (``pred_score``
    softmax, ``gt_label``, and the sample's ``index`` and ``reversed``)."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor)
        self.fc = nn.Linear(4, 3)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        inputs = torch.stack(inputs) if isinstance(inputs, (list, tuple)) else inputs
        logits = self.fc(inputs)
        if mode == "predict":
            return [
                dict(pred_score=score, gt_label=s.gt_label, index=s.index, reversed=s.reversed)
                for score, s in zip(logits.softmax(dim=1), data_samples)
            ]
        return logits


@MODELS.register_module()
class TtaAverageScores(BaseTTAModel):
    """Each sample's ``pred_score`` averaged over its views; the other fields of its first
    view, and ``views``: how many there were."""

    def merge_preds(self, data_samples_list):
        merged = []
        for views in data_samples_list:
            scores = torch.stack([view["pred_score"] for view in views])
            merged.append({**views[0], "pred_score": scores.mean(dim=0), "views": len(views)})
        return merged
