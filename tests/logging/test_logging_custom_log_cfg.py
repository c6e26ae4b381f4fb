"""LogProcessor's custom_cfg: statistics added or replaced per scalar, those registered with
HistoryBuffer.register_statistics, and the build errors that name the entry."""

import numpy as np
import pytest

from runnerx.logging import HistoryBuffer, LogProcessor
from tests.logging.test_logging_log_processor import fill_train, make_runner


def test_custom_cfg_adds_and_replaces_statistics():
    runner = make_runner("lp_custom")
    fill_train(runner.message_hub, 30)  # loss 2..31, acc 0..29
    processor = LogProcessor(
        custom_cfg=[
            dict(data_src="loss", log_name="loss_epoch", method_name="mean", window_size="epoch"),
            dict(data_src="loss", log_name="loss_global", method_name="mean", window_size="global"),
            dict(data_src="acc", method_name="max", window_size=5),
            dict(data_src="loss", log_name="loss_min", method_name="min"),
        ]
    )
    tag, line = processor.get_log_after_iter(runner, batch_idx=3, mode="train")
    assert tag["loss_epoch"] == pytest.approx((28 + 29 + 30 + 31) / 4)  # 4 iterations this epoch
    assert tag["loss_global"] == pytest.approx(sum(range(2, 32)) / 30)
    assert tag["acc"] == 29.0
    assert tag["loss_min"] == 2.0
    assert line.endswith(
        "loss: 26.5000  acc: 29.0000  loss_epoch: 29.5000  loss_global: 16.5000  loss_min: 2.0000"
    )


@pytest.mark.parametrize(
    ("custom_cfg", "by_epoch", "message"),
    [
        (
            [dict(data_src="loss", method_name="mean", windw_size=5)],
            True,
            r"custom_cfg\[0\] has an unknown key 'windw_size' \(did you mean 'window_size'\?\)",
        ),
        (
            [dict(data_src="loss", method_name="maen")],
            True,
            r"custom_cfg\[0\]\.method_name .* got 'maen' \(did you mean 'mean'\?\)",
        ),
        (
            [dict(data_src="loss", method_name="mean", window_size="epoch")],
            False,
            r"custom_cfg\[0\]\.window_size='epoch' needs log_processor\.by_epoch=True",
        ),
        (
            [dict(data_src="loss", method_name="mean", window_size=0)],
            True,
            r"custom_cfg\[0\]\.window_size must be a positive int, 'epoch' or 'global'",
        ),
        (
            [dict(data_src="loss", method_name="current", window_size=3)],
            True,
            r"custom_cfg\[0\]: method_name='current' takes no window_size",
        ),
        ([dict(method_name="mean")], True, r"custom_cfg\[0\]\.data_src must name"),
        (
            [dict(data_src="loss", method_name="mean"), dict(data_src="loss", method_name="max")],
            True,
            r"custom_cfg\[1\] logs 'loss', which custom_cfg\[0\] logs already",
        ),
    ],
)
def test_custom_cfg_errors_name_the_entry(custom_cfg, by_epoch, message):
    with pytest.raises(ValueError, match=message):
        LogProcessor(by_epoch=by_epoch, custom_cfg=custom_cfg)


def median(buffer, window_size=None):
    values = buffer.data[0]
    return float(np.median(values[-window_size:] if window_size else values))


def scaled_max(buffer, window_size, scale):
    return float(np.max(buffer.data[0][-window_size:])) * scale


@pytest.fixture
def registered(monkeypatch):
    """median and scaled_max added with HistoryBuffer.register_statistics for one test, and
    only they (other tests' statistics are out of sight until it ends)."""
    monkeypatch.setattr(HistoryBuffer, "_custom_statistics", {})
    HistoryBuffer.register_statistics(median)
    HistoryBuffer.register_statistics(scaled_max)


def test_custom_cfg_takes_a_statistic_added_with_register_statistics(registered):
    runner = make_runner("lp_custom_registered")
    fill_train(runner.message_hub, 30)  # loss 2..31
    processor = LogProcessor(
        custom_cfg=[
            dict(data_src="loss", log_name="loss_med", method_name="median", window_size=4),
            dict(data_src="loss", log_name="loss_med_all", method_name="median"),
            # MMEngine passes the entry's other keys; 'global' as an int window
            dict(
                data_src="loss",
                log_name="x",
                method_name="scaled_max",
                window_size="global",
                scale=2,
            ),
            dict(
                data_src="loss",
                log_name="y",
                method_name="scaled_max",
                window_size="epoch",
                scale=3,
            ),
        ]
    )
    tag, line = processor.get_log_after_iter(runner, batch_idx=3, mode="train")
    assert (tag["loss_med"], tag["loss_med_all"], tag["x"], tag["y"]) == (29.5, 16.5, 62.0, 93.0)
    assert line.endswith("  loss_med: 29.5000  loss_med_all: 16.5000  x: 62.0000  y: 93.0000")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            dict(method_name="medain"),
            r"custom_cfg\[0\]\.method_name must be one of 'mean', 'min', 'max', 'current' or a "
            r"statistic added with HistoryBuffer.register_statistics \(added: 'median', "
            r"'scaled_max'\), got 'medain' \(did you mean 'median'\?\)",
        ),
        (
            dict(method_name="scaled_max", window_size=3),
            r"custom_cfg\[0\]: method_name='scaled_max' names scaled_max\(buffer, window_size, "
            r"scale\) .* call as scaled_max\(buffer, window_size=...\): missing a required "
            r"argument: 'scale'",
        ),
        (
            dict(method_name="median", window_size=3, scael=2),
            r"would call as median\(buffer, window_size=..., scael=...\): got an unexpected "
            r"keyword argument 'scael'",
        ),
        (
            dict(method_name="median", window_size=0),
            r"custom_cfg\[0\]\.window_size must be a positive int, 'epoch' or 'global'",
        ),
    ],
)
def test_custom_cfg_errors_with_registered_statistics_name_the_entry(registered, entry, message):
    with pytest.raises(ValueError, match=message):
        LogProcessor(custom_cfg=[dict(data_src="loss", **entry)])
