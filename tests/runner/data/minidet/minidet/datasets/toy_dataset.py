"""The toy dataset: .npy images of one coloured square (the object) among grey distractors."""

import json
import os

import numpy as np

from minidet.registry import DATASETS
from runnerx.dataset import BaseDataset
from runnerx.fileio import get_file_backend, join_path, load

CLASSES = ("red", "green", "blue")
PALETTE = [(220, 20, 60), (20, 200, 20), (30, 60, 230)]


def make_toy_data(root, num_images=24, size=32, seed=0):
    """Write ``root/images/<i>.npy`` (H x W x 3 uint8) and ``root/annotations.json``."""
    rng = np.random.default_rng(seed)
    os.makedirs(os.path.join(root, "images"), exist_ok=True)
    annotations = {}
    for index in range(num_images):
        image = np.full((size, size, 3), 40, dtype=np.uint8)
        for _ in range(2):  # grey distractors
            x, y = rng.integers(0, size - 4, size=2)
            image[y : y + 4, x : x + 4] = 128
        label = int(rng.integers(len(CLASSES)))
        w, h = (int(v) for v in rng.integers(8, 16, size=2))
        x1, y1 = int(rng.integers(0, size - w)), int(rng.integers(0, size - h))
        image[y1 : y1 + h, x1 : x1 + w] = PALETTE[label]
        name = f"{index:04d}.npy"
        np.save(os.path.join(root, "images", name), image)
        annotations[name] = dict(bbox=[x1, y1, x1 + w, y1 + h], label=label)
    with open(os.path.join(root, "annotations.json"), "w") as file:
        json.dump(dict(metainfo=dict(classes=list(CLASSES)), annotations=annotations), file)


@DATASETS.register_module()
class ToyBoxDataset(BaseDataset):
    """Lists ``data_prefix['img_path']`` through the file backend; boxes from ``ann_file``."""

    METAINFO = dict(classes=CLASSES, palette=PALETTE)

    def load_data_list(self):
        annotations = load(self.ann_file)["annotations"]
        img_dir = self.data_prefix["img_path"]
        backend = get_file_backend(img_dir, backend_args=self.backend_args)
        names = sorted(backend.list_dir_or_file(img_dir, list_dir=False, suffix=".npy"))
        data_list = []
        for name in names:
            ann = annotations[name]
            data_list.append(
                dict(
                    img_path=join_path(img_dir, name, backend_args=self.backend_args),
                    gt_bbox=ann["bbox"],
                    gt_label=ann["label"],
                )
            )
        return data_list

    def __init__(self, *args, backend_args=None, **kwargs):
        self.backend_args = backend_args
        super().__init__(*args, **kwargs)
