"""get_metric_value at MMEngine's paths: full names, names without prefix, the errors (with
mmengine-lite as the oracle), and a custom hook reading the validation metrics of a real run."""

from pathlib import Path

import pytest

from runnerx.config import Config
from runnerx.evaluator import get_metric_value
from runnerx.hooks import Hook
from runnerx.registry import HOOKS
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]

METRICS = {"coco/AP": 0.5, "coco/AR": 0.7, "voc/AP": 0.4, "voc/mAP": 0.3, "loss": 1.5}


@pytest.mark.parametrize(
    ("indicator", "value"),
    [("coco/AP", 0.5), ("voc/AP", 0.4), ("AR", 0.7), ("mAP", 0.3), ("loss", 1.5)],
)
def test_a_full_name_or_a_name_only_one_key_ends_in_finds_its_value(indicator, value):
    assert get_metric_value(indicator, METRICS) == value


@pytest.mark.parametrize(
    ("indicator", "match"),
    [
        ("AP", "matches multiple metrics"),  # coco/AP and voc/AP
        ("coco/mAP", "can not match any metric"),  # wrong metric for the prefix
        ("lvis/AP", "can not match any metric"),  # wrong prefix
        ("top1", "can not match any metric"),
        ("coco", "can not match any metric"),  # a prefix is not a metric
    ],
)
def test_no_or_several_matches_are_value_errors(indicator, match):
    with pytest.raises(ValueError, match=match):
        get_metric_value(indicator, METRICS)


def test_a_misspelt_name_gets_a_suggestion():
    with pytest.raises(ValueError, match="Did you mean 'coco/AR'"):
        get_metric_value("coco/RA", METRICS)


@pytest.mark.parametrize("indicator", ["coco/AP", "AR", "mAP", "loss", "AP", "lvis/AP", "xx"])
def test_same_value_or_same_error_type_as_mmengine(indicator):
    mmengine_evaluator = pytest.importorskip("mmengine.evaluator")

    def outcome(lookup):
        try:
            return lookup(indicator, METRICS)
        except Exception as error:  # the type is what is compared
            return type(error)

    assert outcome(get_metric_value) == outcome(mmengine_evaluator.get_metric_value)


def test_mmengine_module_paths_of_the_evaluator_names():
    from runnerx.evaluator import DumpResults
    from runnerx.evaluator.metric import DumpResults as dump_results_by_metric_path
    from runnerx.evaluator.utils import get_metric_value as by_utils_path

    assert by_utils_path is get_metric_value
    assert dump_results_by_metric_path is DumpResults


@HOOKS.register_module(name="TestMetricValueRecorder", force=True)
class MetricValueRecorder(Hook):
    """A user's hook written for MMEngine: picks one value out of the validation metrics."""

    def __init__(self, indicator):
        self.indicator = indicator
        self.values = []

    def after_val_epoch(self, runner, metrics=None):
        self.values.append(get_metric_value(self.indicator, metrics))


def test_a_custom_hook_reads_a_validation_metric_of_a_real_run(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.merge_from_dict({"train_cfg.max_epochs": 1, "param_scheduler.1.end": 1})
    cfg.work_dir = str(tmp_path)
    cfg.custom_hooks = [dict(type="TestMetricValueRecorder", indicator="top1")]
    runner = Runner.from_cfg(cfg)
    runner.train()
    (recorder,) = [hook for hook in runner.hooks if isinstance(hook, MetricValueRecorder)]
    assert len(recorder.values) == 1
    assert recorder.values[0] == runner.message_hub.get_scalar("val/accuracy/top1").current()
