"""Evaluator and BaseMetric: building from every config form, merging, prefixes, warnings,
dataset_meta, and a metric written the MMEngine way."""

import numpy as np
import pytest
import torch

from runnerx.config import Config
from runnerx.data import pseudo_collate
from runnerx.evaluator import Accuracy, BaseMetric, Evaluator, Perplexity, build_evaluator
from runnerx.registry import METRICS


@METRICS.register_module(name="TestEvaluatorMeanError", force=True)
class MeanError(BaseMetric):
    """Written as for MMEngine: process appends per-sample dicts, compute_metrics reduces."""

    default_prefix = "error"

    def __init__(self, scale=1.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = scale
        self.batches_seen = []

    def process(self, data_batch, data_samples):
        self.batches_seen.append(data_batch)
        for sample in data_samples:
            self.results.append(
                dict(pred=sample["pred"].cpu(), target=torch.as_tensor(sample["target"]))
            )

    def compute_metrics(self, results):
        errors = [abs(r["pred"] - r["target"]).item() for r in results]
        metrics = {"mae": self.scale * sum(errors) / len(errors)}
        if self.dataset_meta is not None:
            metrics["classes"] = len(self.dataset_meta["classes"])
        return metrics


def samples(*pairs):
    return [dict(pred=torch.tensor(p), target=t) for p, t in pairs]


def metric_types(evaluator):
    return [type(metric) for metric in evaluator.metrics]


@pytest.mark.parametrize(
    "cfg",
    [
        dict(type="Accuracy", topk=(1, 2)),
        [dict(type="Accuracy", topk=(1, 2))],
        dict(type="Evaluator", metrics=[dict(type="Accuracy", topk=(1, 2))]),
        dict(type="Evaluator", metrics=dict(type="Accuracy", topk=(1, 2))),
        dict(metrics=[dict(type="Accuracy", topk=(1, 2))]),
        Accuracy(topk=(1, 2)),
        [Accuracy(topk=(1, 2))],
    ],
    ids=["metric", "list", "evaluator", "evaluator-one", "metrics-no-type", "object", "objects"],
)
def test_build_evaluator_from_every_form(cfg):
    evaluator = build_evaluator(cfg)
    assert isinstance(evaluator, Evaluator)
    assert metric_types(evaluator) == [Accuracy]
    assert evaluator.metrics[0].topk == (1, 2)


def test_build_evaluator_from_a_config_file_value_and_several_metrics():
    cfg = Config(
        dict(
            val_evaluator=[
                dict(type="Accuracy"),
                dict(type="Perplexity"),
                dict(type="TestEvaluatorMeanError", scale=2.0),
            ]
        )
    )
    evaluator = build_evaluator(cfg.val_evaluator)
    assert metric_types(evaluator) == [Accuracy, Perplexity, MeanError]
    assert evaluator.metrics[2].scale == 2.0


def test_build_evaluator_returns_an_evaluator_as_is():
    evaluator = Evaluator(Accuracy())
    assert build_evaluator(evaluator) is evaluator


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        (None, r"test_evaluator must be .*got NoneType"),
        ("Accuracy", r"test_evaluator must be .*got str"),
        ([dict(type="Accuracy"), 3], r"test_evaluator\[1\] must be .*got int"),
    ],
)
def test_build_evaluator_rejects_other_values_naming_the_key(cfg, match):
    with pytest.raises(TypeError, match=match):
        build_evaluator(cfg, key="test_evaluator")


def test_unknown_metric_type_is_named():
    with pytest.raises(KeyError, match="NoSuchMetric"):
        build_evaluator(dict(type="NoSuchMetric"))


def test_evaluator_rejects_a_bad_metric_naming_its_index():
    with pytest.raises(TypeError, match=r"Evaluator metrics\[1\] must be"):
        Evaluator([Accuracy(), object()])


def test_evaluate_merges_metrics_and_process_passes_predictions_then_batch():
    error = MeanError()
    evaluator = Evaluator([error, dict(type="TestEvaluatorMeanError", prefix="scaled", scale=10)])
    evaluator.process(samples((1.0, 0), (2.0, 4)), data_batch="batch-0")
    evaluator.process(data_samples=samples((3.0, 3)), data_batch="batch-1")
    assert error.batches_seen == ["batch-0", "batch-1"]
    assert evaluator.evaluate(3) == {"error/mae": 1.0, "scaled/mae": 10.0}
    assert error.results == []  # cleared for the next evaluation


class Received(BaseMetric):
    def process(self, data_batch, data_samples):
        self.results.append(data_samples)

    def compute_metrics(self, results):
        return {}


@pytest.mark.parametrize(
    "predictions, expected",
    [
        ((torch.ones(2, 3), torch.zeros(2)), "a list of the tuple's items"),
        (torch.arange(6.0).reshape(2, 3), "a list of the tensor's rows"),
        (np.arange(6.0).reshape(2, 3), "a list of the array's rows"),
        ({"pred_score": torch.ones(2, 3)}, "the dict as it is"),
    ],
)
def test_metrics_get_a_list_as_mmengine_gives_one_but_a_batched_dict_as_it_is(
    predictions, expected
):
    # an MMEngine metric may torch.stack(data_samples) or append to it: it needs the list
    received = Received()
    Evaluator([received]).process(predictions)
    (given,) = received.results
    if isinstance(predictions, dict):
        assert given is predictions, expected
        return
    assert isinstance(given, list) and len(given) == 2, expected
    assert all((a == b).all() for a, b in zip(given, predictions)), expected


def test_evaluate_truncates_to_size():
    evaluator = Evaluator(MeanError())
    evaluator.process(samples((1.0, 0), (5.0, 0)))  # the second one is sampler padding
    assert evaluator.evaluate(1) == {"error/mae": 1.0}


def test_duplicate_keys_are_an_error_naming_both_metrics():
    evaluator = Evaluator([Accuracy(), Accuracy()])
    evaluator.process(dict(pred_score=torch.rand(2, 3), gt_label=torch.tensor([0, 1])))
    with pytest.raises(
        ValueError, match=r"metrics\[0\] \(Accuracy\) and metrics\[1\] \(Accuracy\)"
    ):
        evaluator.evaluate(2)


class FailsOnCompute(MeanError):
    def compute_metrics(self, results):
        raise ZeroDivisionError("no metric today")


@pytest.mark.parametrize("failing", ["first", "clash"])
def test_a_failed_evaluate_clears_every_metrics_results(failing):
    """A caller who catches the error and evaluates again counts no sample twice."""
    first = FailsOnCompute() if failing == "first" else MeanError(prefix="same")
    later = MeanError(prefix="same" if failing == "clash" else None)
    evaluator = Evaluator([first, later, MeanError(prefix="third")])
    evaluator.process(samples((1.0, 0), (2.0, 0)))
    with pytest.raises((ZeroDivisionError, ValueError)):
        evaluator.evaluate(2)
    assert [metric.results for metric in evaluator.metrics] == [[], [], []]
    evaluator.metrics[0] = MeanError(prefix="fresh")
    evaluator.process(samples((4.0, 0)))
    assert evaluator.evaluate(1) == {"fresh/mae": 4.0, f"{later.prefix}/mae": 4.0, "third/mae": 4.0}


def test_prefix_argument_replaces_default_prefix():
    evaluator = Evaluator([Accuracy(), Accuracy(prefix="val_acc")])
    evaluator.process(dict(pred_score=torch.eye(3), gt_label=torch.tensor([0, 1, 0])))
    metrics = evaluator.evaluate(3)
    assert metrics == pytest.approx({"accuracy/top1": 200 / 3, "val_acc/top1": 200 / 3})


def test_empty_results_warn_naming_the_metric(tmp_path):
    from runnerx.logging import get_run_logger, make_logger_current

    make_logger_current(get_run_logger(tmp_path / "run.log", "INFO", rank=0))
    evaluator = Evaluator([MeanError(), Accuracy()])
    evaluator.metrics[1].evaluate(0)
    assert "WARNING - Accuracy got no results" in (tmp_path / "run.log").read_text()


def test_dataset_meta_reaches_every_metric():
    evaluator = Evaluator([MeanError(), MeanError(prefix="second")])
    meta = dict(classes=("cat", "dog", "bird"))
    evaluator.dataset_meta = meta
    assert evaluator.dataset_meta is meta
    assert all(metric.dataset_meta is meta for metric in evaluator.metrics)
    evaluator.process(samples((1.0, 1)))
    assert evaluator.evaluate(1) == {
        "error/mae": 0.0,
        "error/classes": 3,
        "second/mae": 0.0,
        "second/classes": 3,
    }


def test_base_metric_checks_collect_arguments():
    with pytest.raises(ValueError, match="collect_device must be 'cpu' or 'gpu'"):
        MeanError(collect_device="cuda")
    with pytest.raises(ValueError, match="collect_dir"):
        MeanError(collect_device="gpu", collect_dir="/tmp/x")


def test_base_metric_is_abstract():
    class NoCompute(BaseMetric):
        default_prefix = "x"

        def process(self, data_batch, data_samples):
            pass

    with pytest.raises(TypeError, match="compute_metrics"):
        NoCompute()


def test_offline_evaluate_chunks_stored_predictions():
    evaluator = Evaluator(MeanError())
    stored = samples((1.0, 0), (2.0, 0), (3.0, 0), (4.0, 0), (5.0, 0))
    assert evaluator.offline_evaluate(stored, chunk_size=2) == {"error/mae": 3.0}
    assert len(evaluator.metrics[0].batches_seen) == 3


def test_offline_evaluate_checks_lengths_and_chunk_size():
    evaluator = Evaluator(MeanError())
    with pytest.raises(ValueError, match="same length"):
        evaluator.offline_evaluate(samples((1.0, 0)), data=[1, 2])
    with pytest.raises(ValueError, match="chunk_size"):
        evaluator.offline_evaluate(samples((1.0, 0)), chunk_size=0)


def test_offline_evaluate_length_mismatch_is_also_mmengines_assertion_error():
    evaluator = Evaluator(MeanError())
    with pytest.raises(AssertionError, match="same length, but have 2 and 3"):
        evaluator.offline_evaluate(samples((1.0, 0), (2.0, 0)), data=[1, 2, 3])


def test_offline_evaluate_collates_data_chunks():
    evaluator = Evaluator(MeanError())
    data = [dict(inputs=torch.tensor([float(i)])) for i in range(3)]
    evaluator.offline_evaluate(samples((1.0, 0), (2.0, 0), (3.0, 0)), data=data, chunk_size=2)
    assert evaluator.metrics[0].batches_seen == [pseudo_collate(data[:2]), pseudo_collate(data[2:])]


class IntIndexedDataset(torch.utils.data.Dataset):
    """A map-style dataset as users write them: indexed by int only, and answering any index
    (no IndexError past its length)."""

    def __len__(self):
        return 3

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise TypeError(f"index must be an int, got {type(index).__name__}")
        return dict(inputs=torch.tensor([float(index)]))


def test_offline_evaluate_reads_a_dataset_indexed_by_int_only():
    evaluator = Evaluator(MeanError())
    stored = samples((1.0, 0), (2.0, 0), (3.0, 0))
    assert evaluator.offline_evaluate(stored, data=IntIndexedDataset(), chunk_size=2) == {
        "error/mae": 2.0
    }
    inputs = [batch["inputs"] for batch in evaluator.metrics[0].batches_seen]
    assert inputs == [[torch.tensor([0.0]), torch.tensor([1.0])], [torch.tensor([2.0])]]


def test_offline_evaluate_reads_generators():
    evaluator = Evaluator(MeanError())
    stored = samples((1.0, 0), (2.0, 0), (3.0, 0))
    assert evaluator.offline_evaluate(iter(stored), chunk_size=2) == {"error/mae": 2.0}
    data = (dict(inputs=torch.tensor([float(i)])) for i in range(3))
    assert evaluator.offline_evaluate(iter(stored), data=data) == {"error/mae": 2.0}
    assert len(evaluator.metrics[0].batches_seen) == 2 + 3
    # the length is known without len(): one more prediction, or datum, is still an error
    with pytest.raises(AssertionError, match="same length, but have at least 3 and 2"):
        evaluator.offline_evaluate(iter(stored), data=iter(range(2)))
    with pytest.raises(AssertionError, match="same length, but have 3 and more than 3"):
        evaluator.offline_evaluate(iter(stored), data=iter(range(4)))
    with pytest.raises(AssertionError, match="same length, but have 2 and 3"):
        evaluator.offline_evaluate(iter(stored[:2]), data=IntIndexedDataset())


def test_process_gives_a_generator_to_every_metric():
    evaluator = Evaluator([MeanError(), MeanError(prefix="second")])
    evaluator.process(sample for sample in samples((1.0, 0), (3.0, 0)))
    assert evaluator.evaluate(2) == {"error/mae": 2.0, "second/mae": 2.0}


def test_more_results_than_the_dataset_has_warn_that_only_the_first_are_scored(tmp_path):
    from runnerx.logging import get_run_logger, make_logger_current

    make_logger_current(get_run_logger(tmp_path / "run.log", "INFO", rank=0))
    accuracy = Accuracy()
    # a dataset of 2 items that are whole batches of 3 samples (DataLoader(batch_size=None))
    accuracy.process(None, [dict(pred_score=row, gt_label=0) for row in torch.eye(3)])
    accuracy.process(None, [dict(pred_score=row, gt_label=1) for row in torch.eye(3)])
    assert accuracy.evaluate(2) == {"accuracy/top1": 50.0}  # the first 2 of 6, as MMEngine
    log = (tmp_path / "run.log").read_text()
    assert "WARNING - Accuracy got 6 results for a dataset of 2: only the first 2 are scored" in log
    accuracy.process(None, [dict(pred_score=row, gt_label=0) for row in torch.eye(3)[:2]])
    accuracy.evaluate(2)
    assert (tmp_path / "run.log").read_text() == log  # as many results as samples: no warning
