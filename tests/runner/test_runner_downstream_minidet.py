"""minidet (tests/runner/data/minidet), a small downstream project written for MMEngine and
ported by changing ``mmengine`` to ``runnerx`` in its imports: its own child registries and
default scope, a BaseDataset listing files through the storage backend, transforms, a model
with a data preprocessor and frozen BN (``efficient_conv_bn_eval``), a metric, a Visualizer
subclass drawn by ``NaiveVisualizationHook``, a BaseInferencer subclass, and configs with
``_base_`` files. It is trained, tested, resumed and used for inference as a user would,
with tools/train.py and tools/test.py, and its numbers are compared with mmengine-lite's on a
copy of the package whose imports say ``mmengine`` again."""

import glob
import json
import os
import pickle
import shutil
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

PROJECT = Path(__file__).parent / "data" / "minidet"
CONFIG = PROJECT / "configs" / "minidet_toy.py"
NUM_IMAGES = 16


def scalars(work_dir):
    """The lines of the newest run's ``vis_data/scalars.json`` under ``work_dir``."""
    path = sorted(glob.glob(os.path.join(work_dir, "*", "vis_data", "scalars.json")))[-1]
    with open(path) as file:
        return [json.loads(line) for line in file]


def val_metrics(lines):
    """The validation lines: the ones with the metric."""
    return [line for line in lines if "toy/mIoU" in line]


@pytest.fixture(scope="module")
def project(tmp_path_factory, run_in_repo):
    """minidet importable, its toy data, a run of tools/train.py for the config's two epochs,
    and MMEngine's results from a copy of the package whose imports say mmengine."""
    root = tmp_path_factory.mktemp("minidet")
    sys.path.insert(0, str(PROJECT))
    from minidet.datasets import make_toy_data

    data_root = str(root / "data")
    make_toy_data(data_root, num_images=NUM_IMAGES)
    data_options = [
        f"{split}_dataloader.dataset.data_root={data_root}" for split in ("train", "val", "test")
    ]
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}

    def tool(name, *args, work_dir, options=()):
        command = [sys.executable, f"tools/{name}.py", str(CONFIG), *args]
        command += ["--work-dir", str(work_dir), "--cfg-options", *data_options, *options]
        result = run_in_repo(command, env=env)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        return result

    work_dir = root / "train"
    train = tool("train", work_dir=work_dir)

    mmengine_copy = root / "mmengine_minidet"
    shutil.copytree(PROJECT, mmengine_copy, ignore=shutil.ignore_patterns("__pycache__"))
    for path in mmengine_copy.rglob("*.py"):
        path.write_text(path.read_text().replace("runnerx", "mmengine"))
    oracle_out = root / "mmengine.pkl"
    oracle_script = str(mmengine_copy / "minidet_oracle.py")
    oracle = run_in_repo(
        [sys.executable, oracle_script, data_root, str(root / "mm"), str(oracle_out)],
        env={**os.environ, "PYTHONPATH": str(mmengine_copy)},
    )
    assert oracle.returncode == 0, oracle.stderr[-3000:]
    with open(oracle_out, "rb") as file:
        mmengine_results = pickle.load(file)
    yield SimpleNamespace(
        root=root,
        data_root=data_root,
        tool=tool,
        work_dir=work_dir,
        train_log=train.stdout + train.stderr,
        mmengine=mmengine_results,
    )
    sys.path.remove(str(PROJECT))


def test_training_saves_checkpoints_best_one_included_and_folds_the_frozen_bns(project):
    names = {os.path.basename(path) for path in glob.glob(str(project.work_dir / "*.pth"))}
    assert {"epoch_1.pth", "epoch_2.pth"} <= names
    assert len([name for name in names if name.startswith("best_toy_mIoU_epoch_")]) == 1
    assert "2 conv -> bn pairs in backbone folded" in project.train_log
    lines = scalars(project.work_dir)
    assert [line["step"] for line in val_metrics(lines)] == [1, 2]
    for line in val_metrics(lines):
        assert 0 <= line["toy/mIoU"] <= 100 and 0 <= line["toy/accuracy"] <= 100
    losses = [line["loss"] for line in lines if "loss" in line]
    assert losses[-1] < losses[0]
    assert all(
        line["loss"] == pytest.approx(line["loss_cls"] + line["loss_bbox"])
        for line in lines
        if "loss" in line
    )


def test_training_logs_mmengines_numbers(project):
    keys = ("lr", "loss", "loss_cls", "loss_bbox", "toy/mIoU", "toy/accuracy")
    ours = [{k: line[k] for k in keys if k in line} for line in scalars(project.work_dir)]
    theirs = [{k: line[k] for k in keys if k in line} for line in project.mmengine["scalars"]]
    assert len(ours) == len(theirs) == 4
    for mine, other in zip(ours, theirs):
        assert mine == pytest.approx(other, rel=1e-5)


def test_dataset_metric_and_drawing_give_mmengines_results(project):
    sys.path.insert(0, str(PROJECT))  # minidet_oracle.py lies beside the package
    try:
        from minidet_oracle import fixed_results
    finally:
        sys.path.remove(str(PROJECT))
    ours = fixed_results("runnerx", project.data_root)
    theirs = project.mmengine
    assert len(ours["data_list"]) == NUM_IMAGES
    assert ours["data_list"] == theirs["data_list"]
    assert ours["metrics"] == pytest.approx(theirs["metrics"])
    assert 0 < ours["metrics"]["toy/mIoU"] < 100  # the fixed predictions are partly wrong
    assert ours["drawn"].shape == (32, 64, 3)  # gt beside the prediction
    np.testing.assert_array_equal(ours["drawn"], theirs["drawn"])


def test_test_tool_draws_every_sample_and_the_inferencer_predicts_as_it(project):
    checkpoint = project.work_dir / "epoch_2.pth"
    work_dir = project.root / "test"
    out = project.root / "preds.pkl"
    result = project.tool("test", str(checkpoint), "--out", str(out), work_dir=work_dir)
    (log_json,) = glob.glob(str(work_dir / "*" / "*.json"))  # the test's metrics
    with open(log_json) as file:
        metric = json.load(file)
    (last_val,) = val_metrics(scalars(project.work_dir))[-1:]
    assert metric["toy/mIoU"] == pytest.approx(last_val["toy/mIoU"]), result.stdout[-2000:]
    assert metric["toy/accuracy"] == pytest.approx(last_val["toy/accuracy"])
    drawn = glob.glob(str(work_dir / "*" / "vis_data" / "vis_image" / "*.png"))
    assert len(drawn) == NUM_IMAGES

    from minidet.apis import MiniDetInferencer

    with open(out, "rb") as file:
        dumped = {Path(sample["img_path"]).name: sample for sample in pickle.load(file)}
    inferencer = MiniDetInferencer(weights=str(checkpoint), device="cpu", show_progress=False)
    files = sorted(glob.glob(os.path.join(project.data_root, "images", "*.npy")))
    vis_dir = project.root / "vis"
    results = inferencer(files, batch_size=5, out_dir=str(vis_dir))
    assert len(results["predictions"]) == NUM_IMAGES
    assert len(list(vis_dir.glob("*.png"))) == NUM_IMAGES
    classes = ("red", "green", "blue")
    for path, prediction in zip(files, results["predictions"]):
        expected = dumped[Path(path).name]["pred_instances"]
        assert prediction["class_name"] == classes[int(expected["labels"][0])]
        torch.testing.assert_close(torch.tensor(prediction["bbox"]), expected["bboxes"][0])
    arrays = inferencer([np.load(path) for path in files[:3]], batch_size=2)
    for from_array, from_file in zip(arrays["predictions"], results["predictions"]):
        assert from_array["label"] == from_file["label"]
        assert from_array["bbox"] == pytest.approx(from_file["bbox"], abs=1e-4)


def test_training_resumed_from_the_first_epoch_ends_as_the_whole_run(project):
    work_dir = project.root / "resumed"
    resume = project.tool(
        "train", "--resume", str(project.work_dir / "epoch_1.pth"), work_dir=work_dir
    )
    assert "resumed from" in resume.stdout + resume.stderr
    whole = val_metrics(scalars(project.work_dir))[-1]
    resumed = val_metrics(scalars(work_dir))[-1]
    assert resumed["step"] == whole["step"] == 2
    assert resumed["toy/mIoU"] == pytest.approx(whole["toy/mIoU"])
    assert resumed["toy/accuracy"] == pytest.approx(whole["toy/accuracy"])
