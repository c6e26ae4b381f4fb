"""Data elements through the pipeline, as MMEngine passes them: collated into lists, moved by
the data preprocessor, turned into dicts by the Evaluator, and a real Runner training and
validating a model whose predict mode returns data samples (as MMPretrain's do)."""

from pathlib import Path

import mmengine.dataset
import mmengine.model
import mmengine.structures as theirs
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import runnerx.structures as ours
from runnerx import Config
from runnerx.data import DigitsDataset, default_collate, pseudo_collate
from runnerx.evaluator import BaseMetric, Evaluator
from runnerx.model import BaseDataPreprocessor, BaseModel
from runnerx.registry import DATASETS, METRICS, MODELS
from runnerx.runner import Runner
from runnerx.structures import BaseDataElement, InstanceData

ROOT = Path(__file__).parents[2]
DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    ),
]


def batch_of_samples(lib, size=3):
    return [
        dict(
            inputs=torch.full((2,), float(i)),
            data_samples=lib.BaseDataElement(
                metainfo=dict(sample_idx=i),
                gt_label=torch.tensor(i),
                gt_instances=lib.InstanceData(bboxes=torch.ones(i + 1, 4)),
            ),
        )
        for i in range(size)
    ]


@pytest.mark.parametrize("name", ["pseudo_collate", "default_collate"])
def test_collate_keeps_data_elements_in_a_list_as_mmengine_does(name):
    ours_collate = {"pseudo_collate": pseudo_collate, "default_collate": default_collate}[name]
    samples, their_samples = batch_of_samples(ours), batch_of_samples(theirs)
    batch = ours_collate(samples)
    reference = getattr(mmengine.dataset, name)(their_samples)
    assert type(batch["data_samples"]) is type(reference["data_samples"]) is list
    assert all(a is b["data_samples"] for a, b in zip(batch["data_samples"], samples))
    assert type(batch["inputs"]) is type(reference["inputs"])
    assert torch.equal(torch.as_tensor(batch["inputs"][1]), torch.as_tensor(reference["inputs"][1]))


@pytest.mark.parametrize("device", DEVICES)
def test_data_preprocessor_moves_data_elements_as_mmengine_does(device):
    batch = pseudo_collate(batch_of_samples(ours))
    moved = BaseDataPreprocessor().to(device)(batch)
    reference = mmengine.model.BaseDataPreprocessor().to(device)(
        mmengine.dataset.pseudo_collate(batch_of_samples(theirs))
    )
    for sample, expected in zip(moved["data_samples"], reference["data_samples"]):
        assert isinstance(sample, BaseDataElement)
        assert sample.gt_label.device.type == expected.gt_label.device.type == device
        assert sample.gt_instances.bboxes.device == expected.gt_instances.bboxes.device
        assert sample.sample_idx == expected.sample_idx
        assert len(sample.gt_instances) == len(expected.gt_instances)


def test_evaluator_gives_metrics_dicts_and_leaves_other_samples_alone():
    seen = []

    class Recorder(BaseMetric):
        default_prefix = "recorder"

        def process(self, data_batch, data_samples):
            seen.append(data_samples)

        def compute_metrics(self, results):
            return {}

    evaluator = Evaluator(Recorder())
    sample = BaseDataElement(
        metainfo=dict(sample_idx=4), pred_score=torch.ones(2), pred=InstanceData(labels=[1])
    )
    evaluator.process([sample, dict(pred_score=1)])
    assert seen[-1] == [
        dict(sample_idx=4, pred_score=sample.pred_score, pred=dict(labels=[1])),
        dict(pred_score=1),
    ]
    dicts = [dict(a=1)]
    evaluator.process(dicts)
    evaluator.process(batched := dict(pred_score=torch.ones(2, 3)))
    assert seen[-2] is dicts and seen[-1] is batched  # passed through untouched


@DATASETS.register_module(name="StructuresDigits", force=True)
class StructuresDigits(DigitsDataset):
    """The digits as an MMPretrain dataset gives them: each label in a data sample."""

    def __getitem__(self, index):
        item = super().__getitem__(index)
        sample = BaseDataElement(metainfo=dict(sample_idx=index), gt_label=item["data_samples"])
        return dict(inputs=item["inputs"], data_samples=sample)


@MODELS.register_module(name="StructuresClassifier", force=True)
class StructuresClassifier(BaseModel):
    """A linear classifier written as for MMPretrain: predictions go into the data samples."""

    def __init__(self, data_preprocessor=None):
        super().__init__(data_preprocessor)
        self.fc = nn.Linear(64, 10)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.fc(torch.stack(inputs).flatten(1))  # pseudo_collate: a list of images
        if mode == "loss":
            labels = torch.stack([sample.gt_label for sample in data_samples])
            return dict(loss=F.cross_entropy(logits, labels))
        if mode == "predict":
            for sample, score in zip(data_samples, logits.softmax(dim=1)):
                sample.pred_score = score
            return data_samples
        return logits


@METRICS.register_module(name="StructuresDictTop1", force=True)
class DictTop1(BaseMetric):
    """Reads samples as dicts, as MMEngine metrics do."""

    default_prefix = "dict"

    def process(self, data_batch, data_samples):
        for sample in data_samples:
            hit = int(sample["pred_score"].argmax() == sample["gt_label"])
            self.results.append((sample["sample_idx"], hit))

    def compute_metrics(self, results):
        return dict(
            top1=100.0 * sum(hit for _, hit in results) / len(results),
            samples=len({index for index, _ in results}),
        )


def test_a_runner_trains_and_validates_a_model_returning_data_samples(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.model = dict(
        type="StructuresClassifier", data_preprocessor=dict(type="BaseDataPreprocessor")
    )
    for loader in (cfg.train_dataloader, cfg.val_dataloader):
        loader.dataset.type = "StructuresDigits"
        loader.collate_fn = dict(type="pseudo_collate")
    cfg.train_cfg = dict(by_epoch=True, max_epochs=2, val_interval=1)
    cfg.param_scheduler = None
    cfg.default_hooks.checkpoint = None
    cfg.val_evaluator = [dict(type="StructuresDictTop1"), dict(type="Accuracy")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    metrics = runner.val()

    dataset = runner.val_dataloader.dataset
    assert metrics["dict/samples"] == len(dataset)  # every sample's metainfo reached the metric
    with torch.no_grad():
        logits = runner.model(list(dataset.images), mode="tensor")
    by_hand = 100.0 * (logits.argmax(dim=1) == dataset.labels).float().mean().item()
    assert metrics["dict/top1"] == pytest.approx(by_hand)
    assert metrics["accuracy/top1"] == pytest.approx(by_hand)
    assert by_hand > 50  # it learned: chance is 10 %
