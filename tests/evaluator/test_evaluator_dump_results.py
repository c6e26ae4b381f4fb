"""DumpResults (MMEngine's metric that pickles the raw predictions) and tools/test.py --out:
alone, against mmengine-lite, over two real ranks, and end to end after a short training."""

import copy
import json
import os
import pickle
import re
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from runnerx import Config
from runnerx.evaluator import DumpResults, Evaluator, add_dump_results, build_evaluator
from runnerx.registry import METRICS
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]
SIZE = 11  # odd: over two ranks, rank 1's share is one sample shorter
WORLD_SIZE = 2
DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
    ),
]


def predictions(device: str = "cpu") -> dict:
    """A dataset's worth of predictions as one dict of batched tensors, fixed by a seed."""
    generator = torch.Generator().manual_seed(0)
    batch = dict(
        index=torch.arange(SIZE),
        pred_score=torch.rand(SIZE, 4, generator=generator).softmax(dim=1),
        gt_label=torch.randint(4, (SIZE,), generator=generator),
    )
    return {key: value.to(device) for key, value in batch.items()}


def per_sample(batch: dict) -> list[dict]:
    """The same predictions in MMEngine's form: one dict per sample."""
    return [{key: value[i] for key, value in batch.items()} for i in range(len(batch["index"]))]


def batches(batch: dict, size: int, as_samples: bool) -> list:
    """``batch`` cut into batches of ``size`` samples, in either form a model returns."""
    cut = [{key: value[i : i + size] for key, value in batch.items()} for i in range(0, SIZE, size)]
    return [per_sample(part) if as_samples else part for part in cut]


def load(path: Path) -> list:
    with open(path, "rb") as file:
        return pickle.load(file)


def assert_same_samples(dumped: list, expected: list[dict]) -> None:
    assert len(dumped) == len(expected)
    for got, want in zip(dumped, expected):
        assert got.keys() == want.keys()
        for key, value in got.items():
            assert value.device.type == "cpu"
            assert torch.equal(value, want[key].cpu()), key
            # each sample pickles its own values, not the whole batch a row was a view of
            assert value.untyped_storage().nbytes() == value.numel() * value.element_size()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("as_samples", [True, False], ids=["per-sample", "batched"])
def test_dump_results_pickles_every_prediction_on_the_cpu_in_order(tmp_path, device, as_samples):
    out = tmp_path / "new_dir" / "preds.pkl"  # its folder does not exist yet
    evaluator = Evaluator(dict(type="DumpResults", out_file_path=str(out)))  # as a config names it
    for batch in batches(predictions(device), 4, as_samples):
        evaluator.process(batch)
    assert evaluator.evaluate(SIZE) == {}  # it adds no metric
    assert_same_samples(load(out), per_sample(predictions()))
    assert os.listdir(out.parent) == ["preds.pkl"]  # no temporary file left beside it
    assert evaluator.metrics[0].results == []  # cleared for the next pass


def test_a_failed_dump_leaves_the_previous_file_whole(tmp_path):
    out = tmp_path / "preds.pkl"
    metric = DumpResults(str(out))
    metric.process(None, per_sample(predictions()))
    metric.evaluate(SIZE)
    before = out.read_bytes()
    metric.process(None, [dict(score=torch.ones(3), unpicklable=lambda: 0)] * SIZE)
    with pytest.raises(Exception, match="pickle"):
        metric.evaluate(SIZE)
    assert out.read_bytes() == before
    assert os.listdir(tmp_path) == ["preds.pkl"]


def test_dump_matches_mmengine_for_per_sample_predictions(tmp_path):
    mmengine_metric = pytest.importorskip("mmengine.evaluator").DumpResults
    samples = [
        dict(pred=dict(score=s["pred_score"]), label=s["gt_label"], tag=(int(s["index"]), "x"))
        for s in per_sample(predictions())
    ]
    dumped = {}
    for name, metric_class in (("ours", DumpResults), ("mmengine", mmengine_metric)):
        metric = metric_class(out_file_path=str(tmp_path / f"{name}.pkl"))
        for start in range(0, SIZE, 3):
            metric.process({}, samples[start : start + 3])
        assert metric.evaluate(SIZE) == {}
        dumped[name] = load(tmp_path / f"{name}.pkl")
    assert len(dumped["ours"]) == len(dumped["mmengine"]) == SIZE
    for ours, theirs in zip(dumped["ours"], dumped["mmengine"]):
        assert ours.keys() == theirs.keys() and ours["tag"] == theirs["tag"]
        assert torch.equal(ours["pred"]["score"], theirs["pred"]["score"])
        assert torch.equal(ours["label"], theirs["label"])


def test_batched_predictions_that_cannot_be_split_are_explained(tmp_path):
    metric = DumpResults(str(tmp_path / "preds.pkl"))
    with pytest.raises(TypeError, match=r"predictions\['loss'\] .* got Tensor"):
        metric.process(None, dict(pred_score=torch.rand(3, 4), loss=torch.tensor(1.0)))
    with pytest.raises(ValueError, match=r"different numbers of samples: \{'a': 3, 'b': 2\}"):
        metric.process(None, dict(a=torch.rand(3), b=[1, 2]))


@pytest.mark.parametrize("path", ["preds.json", "preds.pkl.gz", "preds", "pkl"])
def test_out_file_path_must_be_a_pickle_file(path):
    with pytest.raises(ValueError, match=r"out_file_path must be a file path ending with \.pkl"):
        METRICS.build(dict(type="DumpResults", out_file_path=path))


def test_pickle_suffixes_are_accepted(tmp_path):
    assert DumpResults(tmp_path / "a.pickle").out_file_path == str(tmp_path / "a.pickle")
    assert DumpResults("a.pkl", collect_device="gpu").collect_device == "gpu"


EVALUATOR_FORMS = {
    "metric": dict(type="Accuracy", topk=(1, 2)),
    "list": [dict(type="Accuracy", topk=(1, 2))],
    "evaluator": dict(type="Evaluator", metrics=[dict(type="Accuracy", topk=(1, 2))]),
    "evaluator-one-metric": dict(type="Evaluator", metrics=dict(type="Accuracy", topk=(1, 2))),
}


@pytest.mark.parametrize("form", EVALUATOR_FORMS)
def test_add_dump_results_keeps_the_metrics_and_dumps(tmp_path, form):
    cfg = EVALUATOR_FORMS[form]
    before = copy.deepcopy(cfg)
    out = tmp_path / "preds.pkl"
    with_dump = build_evaluator(add_dump_results(cfg, str(out)), key="test_evaluator")
    assert cfg == before  # the config it was given is left as it was
    assert [type(m).__name__ for m in with_dump.metrics] == ["Accuracy", "DumpResults"]
    without = build_evaluator(cfg, key="test_evaluator")
    for evaluator in (with_dump, without):
        for batch in batches(predictions(), 4, as_samples=False):
            evaluator.process(batch)
    assert with_dump.evaluate(SIZE) == without.evaluate(SIZE)
    assert_same_samples(load(out), per_sample(predictions()))


def test_add_dump_results_to_no_evaluator_or_a_built_one():
    assert add_dump_results(None, "p.pkl") == dict(type="DumpResults", out_file_path="p.pkl")
    evaluator = Evaluator(dict(type="Accuracy"))
    assert add_dump_results(evaluator, "p.pkl") is evaluator
    assert [type(m).__name__ for m in evaluator.metrics] == ["Accuracy", "DumpResults"]
    with pytest.raises(TypeError, match="test_evaluator must be .* got str"):
        add_dump_results("Accuracy", "p.pkl")


def test_a_shared_val_evaluator_is_not_changed():
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")  # test_evaluator = val_evaluator
    val_before = copy.deepcopy(cfg.val_evaluator.to_dict())
    cfg.test_evaluator = add_dump_results(cfg.test_evaluator, "p.pkl")
    assert cfg.val_evaluator.to_dict() == val_before
    assert [m["type"] for m in cfg.test_evaluator] == ["Accuracy", "DumpResults"]


def test_tools_test_checks_out_before_reading_the_config(capsys):
    tool = load_tool("test")
    with pytest.raises(SystemExit) as exit_info:  # the config does not exist: never read
        tool.main(["no_such_config.py", "no.pth", "--out", "preds.json"])
    assert exit_info.value.code == 2
    assert "--out must be a file path ending with .pkl or .pickle" in capsys.readouterr().err


def run_rank(rank, out_dir):
    dist.init_process_group("gloo", rank=rank, world_size=WORLD_SIZE, timeout=timedelta(seconds=60))
    # what a padding sampler gives: rank r gets samples r, r + 2, ..., rank 1's topped up
    samples = per_sample(predictions())
    share = (samples + samples[:1])[rank::WORLD_SIZE]
    metric = DumpResults(os.path.join(out_dir, f"preds_rank{rank}.pkl"))
    for start in range(0, len(share), 2):
        part = share[start : start + 2]
        metric.process(None, {key: torch.stack([s[key] for s in part]) for key in part[0]})
    return metric.evaluate(SIZE)


def test_two_ranks_dump_every_sample_once_in_dataset_order(tmp_path, spawn_ranks):
    outcomes = spawn_ranks(run_rank, tmp_path, WORLD_SIZE, timeout=120)
    assert outcomes == [{}, {}]
    dumped = load(tmp_path / "preds_rank0.pkl")
    assert [int(sample["index"]) for sample in dumped] == list(range(SIZE))
    assert_same_samples(dumped, per_sample(predictions()))
    assert not (tmp_path / "preds_rank1.pkl").exists()  # only rank 0 writes


def test_tools_test_out_saves_the_test_predictions_and_leaves_the_metrics_alone(
    tmp_path, run_in_repo
):
    from runnerx.data import DigitsDataset

    def tool(*args):
        result = run_in_repo([sys.executable, *args])
        assert result.returncode == 0, f"{args}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}"
        return result

    work = tmp_path / "work"
    epochs = ["--cfg-options", "train_cfg.max_epochs=1", "param_scheduler.1.end=1"]
    tool("tools/train.py", "configs/digits_convnet.py", "--work-dir", str(work), *epochs)
    runs = {}
    for name, extra in (("plain", []), ("out", ["--out", str(tmp_path / "dump/preds.pkl")])):
        test_dir = tmp_path / name
        checkpoint = str(work / "epoch_1.pth")
        result = tool(
            "tools/test.py",
            "configs/digits_convnet.py",
            checkpoint,
            "--work-dir",
            str(test_dir),
            *extra,
        )
        (log_dir,) = [path for path in test_dir.iterdir() if path.is_dir()]
        metrics = json.loads((log_dir / f"{log_dir.name}.json").read_text())
        printed = re.search(r"Epoch\(test\).*?(accuracy/top1: \S+)", result.stdout + result.stderr)
        assert printed, result.stdout + result.stderr
        runs[name] = (printed.group(1), {k: v for k, v in metrics.items() if "time" not in k})
    assert runs["out"] == runs["plain"]
    assert list(runs["out"][1]) == ["accuracy/top1"]

    dumped = load(tmp_path / "dump/preds.pkl")
    dataset = DigitsDataset(split="test")
    assert len(dumped) == len(dataset)
    labels = torch.stack([sample["gt_label"] for sample in dumped])
    assert labels.tolist() == dataset.labels.tolist()  # dataset order
    predicted = torch.stack([sample["pred_score"] for sample in dumped]).argmax(dim=1)
    accuracy = 100.0 * (predicted == labels).double().mean().item()
    assert accuracy == pytest.approx(runs["out"][1]["accuracy/top1"])
