"""ModelSummaryHook, a default hook: the model's parameter counts in the log when training
starts; configured or turned off through default_hooks."""

import os

import pytest

from runnerx.hooks import DEFAULT_HOOKS
from tests.hooks.test_hooks_with_runner import Points, make_runner


def log_text(runner):
    with open(os.path.join(runner.log_dir, f"{runner.timestamp}.log")) as file:
        return file.read()


def summary_lines(text):
    """The lines logged after 'Model summary:' up to the next timestamped line."""
    lines = text.splitlines()
    if not any(line.endswith("Model summary:") for line in lines):
        return None
    start = next(i for i, line in enumerate(lines) if line.endswith("Model summary:")) + 1
    summary = []
    for line in lines[start:]:
        if line[:4].isdigit():  # '2026/11/22 ...': the next record
            break
        summary.append(line)
    return summary


def test_training_logs_the_summary_once_before_the_first_iteration(tmp_path):
    runner = make_runner(tmp_path)
    runner.train()
    text = log_text(runner)
    assert summary_lines(text) == [
        "Line: 3 parameters (3 trainable, 0 frozen), 0.00 MB",
        "  name               type                  parameters  trainable",
        "  data_preprocessor  BaseDataPreprocessor           0          0",
        "  linear             Linear                         3          3",
    ]
    assert text.count("Model summary:") == 1
    assert DEFAULT_HOOKS["model_summary"] == {"type": "ModelSummaryHook"}


def test_max_depth_zero_logs_the_totals_and_none_turns_it_off(tmp_path):
    runner = make_runner(
        tmp_path / "depth0",
        default_hooks=dict(checkpoint=None, model_summary=dict(max_depth=0)),
    )
    runner.train()
    assert summary_lines(log_text(runner)) == [
        "Line: 3 parameters (3 trainable, 0 frozen), 0.00 MB"
    ]
    runner = make_runner(tmp_path / "off", default_hooks=dict(checkpoint=None, model_summary=None))
    runner.train()
    assert summary_lines(log_text(runner)) is None


def test_validation_alone_logs_no_summary(tmp_path):
    runner = make_runner(
        tmp_path,
        val_dataloader=dict(
            dataset=Points(),
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_size=4,
        ),
        val_cfg=dict(),
        val_evaluator=[],
    )
    runner.val()
    assert summary_lines(log_text(runner)) is None


@pytest.mark.parametrize("depth", [-1, "2"])
def test_a_bad_max_depth_is_refused_when_the_runner_is_built(tmp_path, depth):
    with pytest.raises(ValueError, match=r"ModelSummaryHook: max_depth must be an int >= 0"):
        make_runner(tmp_path, default_hooks=dict(model_summary=dict(max_depth=depth)))
