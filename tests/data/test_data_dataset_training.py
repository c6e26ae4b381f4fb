"""End to end: an MMEngine-style BaseDataset (digits written to a JSON annotation file, a
pipeline of registered transforms) inside a RepeatDataset config trains with the Runner."""

import json
import math
from collections import Counter
from pathlib import Path

import torch

from runnerx import Config
from runnerx.data import BaseDataset, DigitsDataset
from runnerx.registry import DATASETS, TRANSFORMS
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]
SEEN: list[int] = []  # sample_idx of every sample the pipeline delivered


@DATASETS.register_module(force=True)
class DigitsJsonDataset(BaseDataset):
    """Digits from an annotation file: ``dict(pixels=[64 floats], label=int)`` per entry."""

    METAINFO = dict(classes=tuple("0123456789"))

    def get_cat_ids(self, idx):
        return [self.get_data_info(idx)["label"]]


@TRANSFORMS.register_module(force=True)
class PixelsToImage:
    def __call__(self, info):
        info["img"] = torch.tensor(info.pop("pixels"), dtype=torch.float32).view(1, 8, 8)
        return info


@TRANSFORMS.register_module(force=True)
class PackDigit:
    def __call__(self, info):
        SEEN.append(info["sample_idx"])
        return dict(inputs=info["img"], data_samples=torch.tensor(info["label"]))


def test_repeat_dataset_of_a_base_dataset_trains(tmp_path):
    train = DigitsDataset("train")
    num_samples = len(train)
    data_list = [
        dict(pixels=train.images[i].flatten().tolist(), label=int(train.labels[i]))
        for i in range(num_samples)
    ]
    ann_file = tmp_path / "digits.json"
    ann_file.write_text(json.dumps(dict(metainfo=dict(source="sklearn"), data_list=data_list)))

    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.merge_from_dict({"train_cfg.max_epochs": 2, "param_scheduler.1.end": 2})
    cfg.train_dataloader.dataset = dict(
        type="RepeatDataset",
        times=2,
        lazy_init=True,
        dataset=dict(
            type="DigitsJsonDataset",
            ann_file=ann_file.name,
            data_root=str(tmp_path),
            data_prefix=dict(),
            pipeline=[dict(type="PixelsToImage"), dict(type="PackDigit")],
        ),
    )
    SEEN.clear()
    runner = Runner.from_cfg(cfg)
    runner.train()

    assert runner.iter == 2 * math.ceil(2 * num_samples / 64)
    assert Counter(SEEN) == {i: 4 for i in range(num_samples)}  # 2 epochs x 2 repeats
    (log_dir,) = [p for p in (tmp_path / "work").iterdir() if p.is_dir()]
    rows = [
        json.loads(line) for line in (log_dir / "vis_data/scalars.json").read_text().splitlines()
    ]
    losses = [row["loss"] for row in rows if "loss" in row]
    assert losses[-1] < 0.5 * losses[0]
    assert [row["accuracy/top1"] for row in rows if "accuracy/top1" in row][-1] > 80
