"""Mixed precision end to end: the digits example trains to a comparable loss in fp32, bf16 and
fp16 (AmpOptimWrapper with a loss scaler), on CPU."""

import json
from pathlib import Path

import pytest

from runnerx import Config
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


def train_digits(work_dir: Path, dtype: str | None) -> tuple[float, float]:
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(work_dir)
    cfg.merge_from_dict({"train_cfg.max_epochs": 3, "param_scheduler.1.end": 3})
    if dtype is not None:
        cfg.merge_from_dict({"optim_wrapper.type": "AmpOptimWrapper", "optim_wrapper.dtype": dtype})
    Runner.from_cfg(cfg).train()
    (log_dir,) = [p for p in work_dir.iterdir() if p.is_dir()]
    lines = (log_dir / "vis_data/scalars.json").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    loss = [row["loss"] for row in rows if "loss" in row][-1]
    accuracy = [row["accuracy/top1"] for row in rows if "accuracy/top1" in row][-1]
    return loss, accuracy


@pytest.fixture(scope="module")
def fp32_run(tmp_path_factory):
    return train_digits(tmp_path_factory.mktemp("fp32"), None)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_amp_trains_like_fp32(tmp_path, dtype, fp32_run):
    fp32_loss, fp32_accuracy = fp32_run
    amp_loss, amp_accuracy = train_digits(tmp_path / dtype, dtype)
    assert amp_accuracy >= fp32_accuracy - 3.0
    assert amp_loss <= max(2.0 * fp32_loss, fp32_loss + 0.05)
