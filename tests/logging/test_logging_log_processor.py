"""LogProcessor: exact MMEngine-style lines and tags from a real MessageHub."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

import runnerx.logging.log_processor as log_processor_module
from runnerx.config import Config
from runnerx.evaluator import BaseMetric
from runnerx.logging import LogProcessor, MessageHub
from runnerx.registry import LOG_PROCESSORS, METRICS
from runnerx.runner import Runner

ROOT = Path(__file__).parents[2]


def make_runner(hub_name: str, trains: bool = True, **overrides) -> SimpleNamespace:
    """A runner with the attributes the log processor reads and a real MessageHub; with
    ``trains``, the hub holds 'max_epochs' / 'max_iters' as RuntimeInfoHook records them."""
    runner = SimpleNamespace(
        message_hub=MessageHub(hub_name),
        epoch=0,
        iter=9,
        max_epochs=10,
        max_iters=230,
        train_dataloader=range(23),
        val_dataloader=range(16),
        test_dataloader=range(16),
        model=torch.nn.Linear(2, 2),
    )
    runner.unwrapped_model = runner.model
    for name, value in overrides.items():
        setattr(runner, name, value)
    if trains:
        runner.message_hub.update_info("max_epochs", runner.max_epochs)
        runner.message_hub.update_info("max_iters", runner.max_iters)
    return runner


def fill_train(hub: MessageHub, iterations: int = 10) -> None:
    """What the runtime-info and timer hooks leave in the hub over ``iterations``."""
    for step in range(iterations):
        hub.update_scalar("train/lr", 0.01)
        hub.update_scalar("train/data_time", 0.001)
        hub.update_scalar("train/time", 0.5)
        hub.update_scalar("train/loss", torch.tensor(2.0 + step))  # tensors, as train_step gives
        hub.update_scalar("train/acc", float(step))


def fill_val(hub: MessageHub, iterations: int, mode: str = "val") -> None:
    for _ in range(iterations):
        hub.update_scalar(f"{mode}/data_time", 0.001)
        hub.update_scalar(f"{mode}/time", 0.25)


def test_epoch_based_train_line_and_tag():
    runner = make_runner("lp_train_epoch")
    fill_train(runner.message_hub, 15)
    tag, line = LogProcessor().get_log_after_iter(runner, batch_idx=9, mode="train")
    # loss and time are averaged over the last 10 updates, acc is its newest value;
    # eta = mean time so far (0.5 s) * (230 - 9 - 1) iterations left
    assert line == (
        "Epoch(train)  [1][10/23]  lr: 1.0000e-02  eta: 0:01:50  time: 0.5000  "
        "data_time: 0.0010  loss: 11.5000  acc: 14.0000"
    )
    assert runner.message_hub.get_info("eta") == pytest.approx(110.0)  # MMEngine's info key
    assert tag == pytest.approx(
        {
            "lr": 0.01,
            "data_time": 0.001,
            "time": 0.5,
            "loss": 11.5,
            "acc": 14.0,
            "epoch": 1,
            "iter": 10,
        }
    )
    assert all(isinstance(tag[key], float) for key in ("lr", "loss", "time", "data_time"))


def test_epochs_are_right_aligned_to_the_width_of_max_epochs():
    runner = make_runner("lp_align", epoch=99, max_epochs=100, iter=2299, max_iters=2300)
    fill_train(runner.message_hub, 1)
    _, line = LogProcessor().get_log_after_iter(runner, 0, "train")
    assert line.startswith("Epoch(train) [100][ 1/23]  lr: 1.0000e-02  eta: 0:00:00  ")
    runner.epoch = 0
    _, line = LogProcessor().get_log_after_iter(runner, 0, "train")
    assert line.startswith("Epoch(train)   [1][ 1/23]  ")


ITERATION_LOOP = SimpleNamespace(unit="iteration")  # what the log processor asks a loop


@pytest.mark.parametrize(
    ("by_epoch", "loop"),
    # an iteration-based loop logs Iter lines whatever by_epoch says (MMEngine: '[1][10/23]')
    [(False, None), (True, ITERATION_LOOP)],
)
def test_iteration_based_train_line(by_epoch, loop):
    runner = make_runner(f"lp_train_iter_{by_epoch}", iter=9, max_iters=1000, _train_loop=loop)
    fill_train(runner.message_hub)
    tag, line = LogProcessor(by_epoch=by_epoch).get_log_after_iter(runner, 9, "train")
    assert line == (
        "Iter(train) [  10/1000]  lr: 1.0000e-02  eta: 0:08:15  time: 0.5000  "
        "data_time: 0.0010  loss: 6.5000  acc: 9.0000"
    )
    assert "epoch" not in tag and tag["iter"] == 10


def test_several_learning_rates_are_shown_together_first():
    runner = make_runner("lp_two_lrs")
    hub = runner.message_hub
    hub.update_scalar("train/generator.lr", 0.01)
    hub.update_scalar("train/discriminator.lr", 0.0002)
    hub.update_scalar("train/loss", 1.0)
    tag, line = LogProcessor().get_log_after_iter(runner, 9, "train")
    assert line == (
        "Epoch(train)  [1][10/23]  generator.lr: 1.0000e-02 discriminator.lr: 2.0000e-04  "
        "loss: 1.0000"
    )
    assert tag["generator.lr"] == 0.01 and tag["discriminator.lr"] == 0.0002


def test_val_iteration_line_shows_eta_and_times_only():
    runner = make_runner("lp_val_iter", epoch=1, max_epochs=5)
    fill_train(runner.message_hub)
    fill_val(runner.message_hub, 5)
    tag, line = LogProcessor().get_log_after_iter(runner, 4, "val")
    # eta = mean time of this loop (0.25 s) * 11 batches left
    assert line == "Epoch(val) [1][ 5/16]    eta: 0:00:02  time: 0.2500  data_time: 0.0010"
    assert tag["epoch"] == 1 and tag["iter"] == 10


def test_val_epoch_line_with_metrics_and_epoch_mean_times():
    runner = make_runner("lp_val_epoch", epoch=1, max_epochs=5)
    hub = runner.message_hub
    fill_val(hub, 16)  # an earlier validation ...
    for _ in range(16):  # ... and this one, slower: its mean is what the line shows
        hub.update_scalar("val/data_time", 0.001)
        hub.update_scalar("val/time", 0.01)
    hub.update_scalar("val/accuracy/top1", 96.2)
    tag, line = LogProcessor().get_log_after_epoch(runner, 16, "val")
    assert (
        line == "Epoch(val) [1][16/16]    accuracy/top1: 96.2000  data_time: 0.0010  time: 0.0100"
    )
    assert tag == pytest.approx({"accuracy/top1": 96.2, "data_time": 0.001, "time": 0.01})
    assert list(tag) == ["accuracy/top1", "data_time", "time"]


@pytest.mark.parametrize("mode", ["val", "test"])
def test_a_result_line_shows_int_and_bool_metrics_as_mmengine(mode):
    runner = make_runner(f"lp_val_ints_{mode}", epoch=1)
    hub = runner.message_hub
    fill_val(hub, 16, mode)
    for name, value in (("n", 10), ("npi", np.int64(2)), ("best", True), ("top1", 96.0)):
        hub.update_scalar(f"{mode}/mx/{name}", value)
    tag, line = LogProcessor().get_log_after_epoch(runner, 16, mode)
    assert "    mx/n: 10  mx/npi: 2  mx/best: True  mx/top1: 96.0000  data_time: " in line
    assert [type(tag[f"mx/{name}"]) for name in ("n", "npi", "best", "top1")] == [
        int,
        int,
        bool,
        float,
    ]


def test_a_training_line_shows_int_and_bool_scalars_as_mmengine():
    runner = make_runner("lp_train_ints")
    hub = runner.message_hub
    fill_train(hub)
    hub.update_scalar("train/icount", 2)
    hub.update_scalar("train/flag", torch.tensor(True))
    hub.update_scalar("train/ratio", 1)
    hub.update_scalar("train/ratio", 0.5)  # the newest value is a float
    processor = LogProcessor(
        custom_cfg=[dict(data_src="icount", log_name="ic", method_name="current")]
    )
    tag, line = processor.get_log_after_iter(runner, 9, "train")
    assert line.endswith("  acc: 9.0000  icount: 2  flag: True  ratio: 0.5000  ic: 2")
    assert [type(tag[name]) for name in ("icount", "flag", "ratio", "ic")] == [
        int,
        bool,
        float,
        int,
    ]
    hub.update_scalar("train/icount", 3.0)
    tag, _ = processor.get_log_after_iter(runner, 9, "train")
    assert type(tag["icount"]) is float


@pytest.mark.parametrize("mode", ["val", "test"])
def test_a_result_line_shows_this_validations_metrics_even_named_like_a_loss(mode):
    # MMEngine smooths 'lm/loss' (mean_pattern matches it) over the past validations
    runner = make_runner(f"lp_val_loss_{mode}", epoch=2)
    hub = runner.message_hub
    for loss in (5.1621, 4.7280):  # two validations: the line is about the second
        fill_val(hub, 16, mode)
        hub.update_scalar(f"{mode}/lm/loss", loss)
    tag, line = LogProcessor(by_epoch=False).get_log_after_epoch(runner, 16, mode)
    assert tag["lm/loss"] == 4.728
    assert f"Iter({mode}) [16/16]    lm/loss: 4.7280  data_time: " in line


def test_custom_cfg_still_smooths_a_validation_metric_on_request():
    runner = make_runner("lp_val_custom", epoch=2)
    hub = runner.message_hub
    for loss in (5.0, 4.0):
        hub.update_scalar("val/lm/loss", loss)
    custom_cfg = [dict(data_src="lm/loss", log_name="lm/loss_mean", method_name="mean")]
    tag, _ = LogProcessor(custom_cfg=custom_cfg).get_log_after_epoch(runner, 16, "val")
    assert (tag["lm/loss"], tag["lm/loss_mean"]) == (4.0, 4.5)


def test_training_losses_stay_smoothed_next_to_a_validation_loss_of_the_same_name():
    runner = make_runner("lp_val_train_loss", epoch=1)
    hub = runner.message_hub
    fill_train(hub)  # train/loss 2..11
    for loss in (5.0, 4.0):
        hub.update_scalar("val/loss", loss)
    processor = LogProcessor()
    assert processor.get_log_after_epoch(runner, 16, "val")[0]["loss"] == 4.0
    assert processor.get_log_after_iter(runner, 9, "train")[0]["loss"] == 6.5


def test_non_scalar_results_are_shown_and_tagged_on_request():
    runner = make_runner("lp_non_scalar", epoch=1)
    hub = runner.message_hub
    fill_val(hub, 16)
    hub.update_scalar("val/accuracy", 90.0)
    hub.update_info("val/confusion", torch.eye(2))
    tag, line = LogProcessor().get_log_after_epoch(runner, 16, "val")
    assert "confusion" not in tag
    assert line.endswith(
        "accuracy: 90.0000  confusion: tensor([[1., 0.], [0., 1.]])  "
        "data_time: 0.0010  time: 0.2500"
    )
    tag, _ = LogProcessor().get_log_after_epoch(runner, 16, "val", with_non_scalar=True)
    assert torch.equal(tag["confusion"], torch.eye(2))


@pytest.mark.parametrize(
    ("by_epoch", "mode", "trains", "header"),
    [
        (True, "test", True, "Epoch(test) [16/16]"),
        (False, "val", True, "Iter(val) [16/16]"),
        (True, "val", False, "Epoch(val) [0][16/16]"),  # validation without training
    ],
)
def test_epoch_line_headers(by_epoch, mode, trains, header):
    epoch = 3 if trains else 0
    runner = make_runner(f"lp_header_{by_epoch}_{mode}_{trains}", trains=trains, epoch=epoch)
    runner.message_hub.update_scalar(f"{mode}/accuracy", 50.0)
    _, line = LogProcessor(by_epoch=by_epoch).get_log_after_epoch(runner, 16, mode)
    assert line == f"{header}    accuracy: 50.0000"


def test_validation_lines_of_an_iteration_based_loop_have_iter_headers():
    runner = make_runner("lp_val_iter_loop", _train_loop=ITERATION_LOOP)
    fill_val(runner.message_hub, 16)
    processor = LogProcessor()  # by_epoch=True, the default
    _, line = processor.get_log_after_iter(runner, 4, "val")
    assert line.startswith("Iter(val) [ 5/16]    eta: ")
    _, line = processor.get_log_after_epoch(runner, 16, "val")
    assert line.startswith("Iter(val) [16/16]    data_time: ")


def test_val_iteration_line_without_training_touches_no_training_attribute():
    runner = make_runner("lp_val_only", trains=False, iter=0)
    for name in ("max_epochs", "max_iters", "train_dataloader"):
        delattr(runner, name)  # a test-only Runner cannot answer these
    fill_val(runner.message_hub, 5)
    tag, line = LogProcessor().get_log_after_iter(runner, 4, "val")
    assert line == "Epoch(val) [0][ 5/16]    eta: 0:00:02  time: 0.2500  data_time: 0.0010"
    assert (tag["epoch"], tag["iter"]) == (0, 0)


def test_test_and_iteration_based_val_iteration_headers():
    runner = make_runner("lp_iter_headers")
    fill_val(runner.message_hub, 5)
    fill_val(runner.message_hub, 5, mode="test")
    _, line = LogProcessor().get_log_after_iter(runner, 4, "test")
    assert line == "Epoch(test) [ 5/16]    eta: 0:00:02  time: 0.2500  data_time: 0.0010"
    _, line = LogProcessor(by_epoch=False).get_log_after_iter(runner, 4, "val")
    assert line.startswith("Iter(val) [ 5/16]    eta: ")


def test_log_with_hierarchy_prefixes_the_tags_and_the_result_lines_as_mmengine():
    runner = make_runner("lp_hierarchy", epoch=1)
    hub = runner.message_hub
    fill_train(hub)
    processor = LogProcessor(log_with_hierarchy=True)
    tag, line = processor.get_log_after_iter(runner, 9, "train")
    assert {"train/lr", "train/loss", "train/time", "epoch", "iter"} <= set(tag)
    assert "  lr: 1.0000e-02" in line and "  loss: 6.5000" in line  # a train line: no prefix
    fill_val(hub, 16)
    hub.update_scalar("val/accuracy", 90.0)
    hub.update_info("val/confusion", torch.eye(2))
    tag, line = processor.get_log_after_epoch(runner, 16, "val")
    assert line == (
        "Epoch(val) [1][16/16]    val/accuracy: 90.0000  "
        "val/confusion: tensor([[1., 0.], [0., 1.]])  val/data_time: 0.0010  val/time: 0.2500"
    )
    assert set(tag) == {"val/accuracy", "val/data_time", "val/time"}


def test_num_digits_0_shows_whole_numbers_as_mmengine():
    runner = make_runner("lp_digits_0")
    fill_train(runner.message_hub)
    _, line = LogProcessor(num_digits=0).get_log_after_iter(runner, 9, "train")
    assert line.endswith("  time: 0  data_time: 0  loss: 6  acc: 9")


def test_bad_arguments_and_modes_are_refused():
    with pytest.raises(ValueError, match="log_processor.window_size must be a positive int"):
        LogProcessor(window_size=0)
    with pytest.raises(ValueError, match=r"log_processor.num_digits must be an int >= 0, got -1"):
        LogProcessor(num_digits=-1)
    with pytest.raises(TypeError, match="must be a dict like"):
        LogProcessor(custom_cfg=["loss"])
    runner = make_runner("lp_modes")
    with pytest.raises(ValueError, match="mode must be one of 'val', 'test'"):
        LogProcessor().get_log_after_epoch(runner, 0, "train")


@pytest.mark.parametrize(
    ("seconds_per_iter", "eta"), [(0.5, "0:01:50"), (17.0, "1:02:20"), (400.0, "1 day, 0:26:40")]
)
def test_eta_is_formatted_as_hours_minutes_seconds(seconds_per_iter, eta):
    runner = make_runner(f"lp_eta_{seconds_per_iter}")
    runner.message_hub.update_scalar("train/time", seconds_per_iter)
    runner.message_hub.update_scalar("train/data_time", 0.0)
    _, line = LogProcessor().get_log_after_iter(runner, 9, "train")
    assert f"  eta: {eta}  " in line


def test_memory_is_shown_for_a_cuda_model_and_the_peak_reset(monkeypatch):
    resets = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)  # a model on CUDA has it
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda device: 1234 * 2**20 + 5)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", resets.append)
    cuda_parameter = SimpleNamespace(device=torch.device("cuda", 0))
    model = SimpleNamespace(parameters=lambda: iter([cuda_parameter]))
    runner = make_runner("lp_memory", model=model, unwrapped_model=model)
    fill_train(runner.message_hub)
    tag, line = LogProcessor().get_log_after_iter(runner, 9, "train")
    assert "data_time: 0.0010  memory: 1234  loss: 6.5000" in line
    assert tag["memory"] == 1234
    assert resets == [torch.device("cuda", 0)]
    assert log_processor_module._max_memory_mb(make_runner("lp_memory_cpu")) is None


def test_built_from_the_registry():
    processor = LOG_PROCESSORS.build(dict(type="LogProcessor", window_size=3, by_epoch=False))
    assert isinstance(processor, LogProcessor)
    assert (processor.window_size, processor.by_epoch) == (3, False)


@METRICS.register_module()
class ClassScoresMetric(BaseMetric):
    """A metric with a per-class vector as well as a scalar, as a user may write one."""

    def process(self, data_batch, data_samples):
        self.results.append(torch.tensor([1.0, 2.0]))

    def compute_metrics(self, results):
        scores = torch.stack(results).mean(0)
        return dict(per_class=scores, mean=scores.mean().item())


def test_a_vector_metric_of_a_real_validation_stays_on_its_log_line(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path)
    cfg.val_evaluator = dict(type="ClassScoresMetric")
    runner = Runner.from_cfg(cfg)
    runner.val()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    (line,) = [line for line in log.splitlines() if "Epoch(val)" in line]
    assert "mean: 1.5000  per_class: tensor([1., 2.])  data_time: " in line
    scalars = json.loads(Path(runner.log_dir, "vis_data/scalars.json").read_text())
    assert scalars["mean"] == 1.5 and "per_class" not in scalars  # scalars only, as MMEngine


@METRICS.register_module()
class CountingMetric(BaseMetric):
    """Integer and bool values, as a metric may return them (counts, a flag)."""

    default_prefix = "mx"

    def process(self, data_batch, data_samples):
        self.results.extend(range(len(data_samples["gt_label"])))

    def compute_metrics(self, results):
        return dict(n=len(results), npi=np.int64(2), ok=True, half=0.5)


def test_int_and_bool_metrics_reach_the_log_and_json_files_as_mmengine(tmp_path):
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.work_dir = str(tmp_path)
    cfg.val_evaluator = cfg.test_evaluator = dict(type="CountingMetric")
    cfg.val_cfg = cfg.test_cfg = dict(limit_batches=1)
    cfg.val_dataloader.batch_size = cfg.test_dataloader.batch_size = 8
    runner = Runner.from_cfg(cfg)
    runner.val()
    runner.test()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    lines = [line for line in log.splitlines() if "Epoch(val)" in line or "Epoch(test)" in line]
    assert len(lines) == 2
    assert all("mx/n: 8  mx/npi: 2  mx/ok: True  mx/half: 0.5000  " in line for line in lines)
    scalars = Path(runner.log_dir, "vis_data/scalars.json").read_text()
    assert '"mx/n": 8, "mx/npi": 2, "mx/ok": true, "mx/half": 0.5' in scalars
    test_json = Path(runner.log_dir, f"{runner.timestamp}.json").read_text()
    assert '"mx/n": 8, "mx/npi": 2, "mx/ok": true, "mx/half": 0.5' in test_json
