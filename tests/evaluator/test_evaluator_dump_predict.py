"""DumpResults as Lightning's ``trainer.predict``: a test run over a loader without labels,
whose predictions carry ``None`` for them."""

import pickle

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from runnerx.evaluator import DumpResults
from runnerx.model import BaseModel
from runnerx.runner import Runner


class Predictor(BaseModel):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y=None, mode="tensor"):
        logits = self.fc(x)
        return dict(probs=logits.softmax(1), y=y) if mode == "predict" else logits


def test_a_predict_run_without_labels_dumps_none_for_them(tmp_path):
    x = torch.randn(5, 4)
    out = tmp_path / "preds.pkl"
    runner = Runner(
        model=Predictor(),
        work_dir=str(tmp_path),
        test_dataloader=DataLoader(TensorDataset(x), batch_size=2),  # no labels: y is None
        test_cfg=dict(),
        test_evaluator=dict(type="DumpResults", out_file_path=str(out)),
    )
    assert runner.test() == {}
    with open(out, "rb") as file:
        dumped = pickle.load(file)
    assert [list(sample) for sample in dumped] == [["probs", "y"]] * 5
    assert all(sample["y"] is None for sample in dumped)
    with torch.no_grad():
        torch.testing.assert_close(
            torch.stack([s["probs"] for s in dumped]), runner.model(x).softmax(1)
        )


def test_a_batch_of_none_only_is_explained(tmp_path):
    metric = DumpResults(str(tmp_path / "preds.pkl"))
    with pytest.raises(ValueError, match=r"no values but None: no samples: \{'y': None\}"):
        metric.process(None, dict(y=None))
