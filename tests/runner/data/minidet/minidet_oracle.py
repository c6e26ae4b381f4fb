"""The parts of minidet whose numbers must be MMEngine's, for either framework.

``fixed_results('runnerx')`` runs them with the ``minidet`` package on ``sys.path``; run as
a script (with a copy of the package whose imports say ``mmengine``) it pickles
``fixed_results('mmengine')`` and the scalars of a two-epoch training run to ``out``::

    python minidet_oracle.py DATA_ROOT WORK_DIR OUT
"""

import glob
import importlib
import json
import os
import pickle
import sys

import numpy as np
import torch

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "configs", "minidet_toy.py")


def dataset_cfg(data_root):
    """The test dataset of the config, without a pipeline, reading ``data_root``."""
    return dict(
        type="ToyBoxDataset",
        data_root=data_root,
        ann_file="annotations.json",
        data_prefix=dict(img_path="images/"),
        pipeline=[],
    )


def fixed_samples(framework, data_list):
    """Data samples with the true box and label, and a prediction made from them: the box
    shifted by (i % 4) pixels, every third label wrong, score 0.5 + i / 100."""
    structures = importlib.import_module(f"{framework}.structures")
    samples = []
    for index, info in enumerate(data_list):
        box = torch.tensor([info["gt_bbox"]], dtype=torch.float32)
        label = torch.tensor([info["gt_label"]])
        sample = structures.BaseDataElement(metainfo=dict(img_path=info["img_path"]))
        sample.gt_instances = structures.InstanceData(bboxes=box, labels=label)
        sample.pred_instances = structures.InstanceData(
            bboxes=box + index % 4,
            labels=(label + (index % 3 == 0)) % 3,
            scores=torch.tensor([0.5 + index / 100]),
        )
        samples.append(sample)
    return samples


def fixed_results(framework, data_root):
    """The dataset's data_list, the metric on fixed predictions and a drawn sample."""
    registry = importlib.import_module(f"{framework}.registry")
    registry.init_default_scope("minidet")
    dataset = registry.DATASETS.build(dataset_cfg(data_root))
    data_list = [dataset.get_data_info(i) for i in range(len(dataset))]

    samples = fixed_samples(framework, data_list)
    evaluator = importlib.import_module(f"{framework}.evaluator").Evaluator(
        dict(type="BoxIoUAccuracy")
    )
    evaluator.dataset_meta = dataset.metainfo
    evaluator.process(data_samples=samples[:5])
    evaluator.process(data_samples=samples[5:])
    metrics = evaluator.evaluate(len(samples))

    from minidet.visualization import MiniDetVisualizer

    visualizer = MiniDetVisualizer(name=f"oracle-{framework}")
    visualizer.dataset_meta = dataset.metainfo
    image = np.load(data_list[0]["img_path"])
    drawn = visualizer.add_datasample("sample", image, samples[0])
    return dict(data_list=data_list, metrics=metrics, drawn=drawn, classes=dataset.metainfo)


def main(data_root, work_dir, out):
    """MMEngine's results, and the scalars of training the config for its two epochs."""
    from mmengine.config import Config
    from mmengine.runner import Runner

    results = fixed_results("mmengine", data_root)
    cfg = Config.fromfile(CONFIG)
    for split in ("train", "val", "test"):
        cfg[f"{split}_dataloader"].dataset.data_root = data_root
    cfg.work_dir = work_dir
    cfg.custom_hooks = []  # MMEngine's NaiveVisualizationHook fails on dict batches
    Runner.from_cfg(cfg).train()
    (scalars,) = glob.glob(os.path.join(work_dir, "*", "vis_data", "scalars.json"))
    with open(scalars) as file:
        results["scalars"] = [json.loads(line) for line in file]
    with open(out, "wb") as file:
        pickle.dump(results, file)


if __name__ == "__main__":
    main(*sys.argv[1:4])
