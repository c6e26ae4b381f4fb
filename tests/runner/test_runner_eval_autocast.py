"""``val_cfg`` / ``test_cfg`` autocast: ``fp16=True`` in the device's default dtype, as
MMEngine's loops (bfloat16 on CPU), and ``dtype`` to choose it."""

import pytest
import torch
from torch import nn

from runnerx.evaluator import BaseMetric
from runnerx.model import BaseModel
from runnerx.runner import Runner


class AutocastSeen(BaseModel):
    """Predicts the dtype its linear layer computes in (the autocast in force)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(2, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return [self.linear(inputs).dtype]


class Dtypes(BaseMetric):
    def process(self, data_batch, data_samples):
        self.results.extend(data_samples)

    def compute_metrics(self, results):
        return {"dtypes": sorted({str(dtype) for dtype in results})}


def evaluated_dtypes(tmp_path, stage: str, cfg: dict) -> list[str]:
    loader = dict(
        dataset=[dict(inputs=torch.zeros(2))] * 4,
        batch_size=2,
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
    )
    runner = Runner(
        model=AutocastSeen(),
        work_dir=str(tmp_path),
        **{f"{stage}_dataloader": loader, f"{stage}_cfg": cfg, f"{stage}_evaluator": Dtypes()},
    )
    return getattr(runner, stage)()["dtypes"]


@pytest.mark.parametrize(
    ("stage", "cfg", "expected"),
    [
        ("val", {}, ["torch.float32"]),
        ("val", {"fp16": True}, ["torch.bfloat16"]),  # CPU's autocast dtype, as MMEngine's
        ("val", {"dtype": "float16"}, ["torch.float16"]),
        ("test", {"dtype": "bfloat16"}, ["torch.bfloat16"]),
        ("test", {"fp16": True, "dtype": torch.float16}, ["torch.float16"]),
    ],
)
def test_the_loops_evaluate_in_the_dtype_asked_for(tmp_path, stage, cfg, expected):
    assert evaluated_dtypes(tmp_path, stage, cfg) == expected


def test_an_unknown_dtype_names_the_key(tmp_path):
    with pytest.raises(ValueError, match=r"val_cfg.dtype='bf16' is not supported.*'bfloat16'"):
        evaluated_dtypes(tmp_path, "val", {"dtype": "bf16"})
