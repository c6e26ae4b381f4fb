"""BaseMetric.evaluate as MMEngine runs it: ``self.results`` is cleared after
``compute_metrics`` (a metric that reads it, as MMEngine's segmentation example does, works),
results reach ``compute_metrics`` on the CPU, and the "no prefix" warning is one log line per
metric class."""

from pathlib import Path

import pytest
import torch
from mmengine.evaluator import BaseMetric as MMEngineBaseMetric

import runnerx.logging.logger as logger_module
from runnerx import Config
from runnerx.evaluator import BaseMetric, Evaluator
from runnerx.logging import get_run_logger
from runnerx.registry import METRICS
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


def batch_iou_metric(base):
    """A metric written as MMEngine's segmentation example writes it: one entry per batch,
    and compute_metrics sums over ``self.results`` rather than over its argument."""

    class BatchIoU(base):
        default_prefix = "seg"

        def process(self, data_batch, data_samples):
            preds, labels = data_samples
            iou = (preds == labels).sum() / torch.logical_or(preds, labels).sum()
            self.results.append(dict(batch_size=len(labels), iou=iou * len(labels)))

        def compute_metrics(self, results):
            total = sum(entry["iou"] for entry in self.results)
            count = sum(entry["batch_size"] for entry in self.results)
            return dict(iou=float(total / count))

    return BatchIoU


def segmentation_batches():
    generator = torch.Generator().manual_seed(0)
    return [
        tuple(torch.randint(0, 3, (4, 5, 5), generator=generator) for _ in ("pred", "label"))
        for _ in range(3)
    ]


def test_a_metric_reading_self_results_gives_mmengines_value():
    outcomes = []
    for base in (BaseMetric, MMEngineBaseMetric):
        metric = batch_iou_metric(base)()
        for batch in segmentation_batches():
            metric.process(None, batch)
        outcomes.append(metric.evaluate(12))
        assert metric.results == []  # cleared for the next evaluation
    ours, mmengine = outcomes
    assert set(ours) == {"seg/iou"} and 0 < ours["seg/iou"] < 1
    assert ours == pytest.approx(mmengine)


def test_results_are_cleared_when_compute_metrics_raises():
    class Fails(BaseMetric):
        default_prefix = "fails"

        def process(self, data_batch, data_samples):
            self.results.extend(data_samples)

        def compute_metrics(self, results):
            raise ZeroDivisionError("no metric today")

    metric = Fails()
    metric.process(None, [1, 2])
    with pytest.raises(ZeroDivisionError):
        metric.evaluate(2)
    assert metric.results == []


class MovesItself:
    """Stands in for a data sample on the GPU: something with ``cpu()``, as data elements."""

    def __init__(self, value):
        self.value = value
        self.on_cpu = False

    def cpu(self):
        moved = MovesItself(self.value)
        moved.on_cpu = True
        return moved


class Received(BaseMetric):
    default_prefix = "received"

    def process(self, data_batch, data_samples):
        self.results.extend(data_samples)

    def compute_metrics(self, results):
        self.received = results
        return {}


def test_compute_metrics_gets_results_moved_to_the_cpu_and_cpu_tensors_as_they_are():
    cpu_tensor = torch.arange(3)
    metric = Received()
    metric.process(None, [dict(pred=cpu_tensor, sample=(MovesItself(1), [MovesItself(2)]))])
    metric.evaluate(1)
    (entry,) = metric.received
    assert entry["pred"] is cpu_tensor
    first, (second,) = entry["sample"]
    assert first.on_cpu and second.on_cpu and (first.value, second.value) == (1, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_tensors_reach_compute_metrics_on_the_cpu_as_in_mmengine():
    metric = Received()
    metric.process(None, [dict(pred=torch.ones(2, device="cuda"))])
    metric.evaluate(1)
    assert metric.received[0]["pred"].device.type == "cpu"


class Bare(BaseMetric):
    """No prefix at all."""

    def process(self, data_batch, data_samples):
        self.results.append(1)

    def compute_metrics(self, results):
        return {"count": len(results)}


class AlsoBare(Bare):
    """No prefix either."""


def test_a_metric_without_prefix_logs_one_warning_line_and_no_python_warning(
    tmp_path, monkeypatch, recwarn
):
    log_file = tmp_path / "run.log"
    monkeypatch.setattr(logger_module, "_current_logger", get_run_logger(log_file, rank=0))
    metric = Bare()
    metric.process(None, None)
    assert metric.evaluate(1) == {"count": 1}  # keys without a prefix
    # more evaluators of the same metric class in one process: no more lines, as in MMEngine
    Evaluator([Bare(), Bare()])
    Evaluator(Bare())
    lines = [line for line in log_file.read_text().splitlines() if "no prefix" in line]
    assert len(lines) == 1 and " - WARNING - metric Bare has no prefix" in lines[0]
    assert not [w for w in recwarn if "prefix" in str(w.message)]
    # another class without a prefix is a warning of its own
    AlsoBare()
    lines = [line for line in log_file.read_text().splitlines() if "no prefix" in line]
    assert len(lines) == 2 and " - WARNING - metric AlsoBare has no prefix" in lines[1]


@METRICS.register_module(name="TestBaseMetricNoPrefix", force=True)
class DigitsHitRate(BaseMetric):
    """The share of digits predicted right; no prefix."""

    def process(self, data_batch, data_samples):
        hits = data_samples["pred_score"].argmax(dim=1) == data_samples["gt_label"]
        self.results.extend(hits.tolist())

    def compute_metrics(self, results):
        return {"hit_rate": sum(results) / len(results)}


def test_the_no_prefix_warning_goes_to_the_runs_log_file(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path / "work")
    cfg.val_evaluator = dict(type="TestBaseMetricNoPrefix")
    runner = Runner.from_cfg(cfg)
    metrics = runner.val()
    assert set(metrics) == {"hit_rate"}
    (log_file,) = (tmp_path / "work").glob("*/*.log")
    text = log_file.read_text()
    assert "WARNING - metric DigitsHitRate has no prefix" in text
