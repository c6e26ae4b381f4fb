"""Test-time augmentation in a run: ``tools/test.py --tta`` (the config rewrite of OpenMMLab's
test scripts), ``build_runner_with_tta`` and ``PrepareTTAHook``, with real Runners on a small
dataset whose views are the plain and the reversed features."""

import copy
import os
import pickle
import re
import sys
from pathlib import Path

import pytest
import torch

from runnerx import Config
from runnerx.hooks import PrepareTTAHook, build_runner_with_tta
from runnerx.hooks.prepare_tta_hook import use_tta_model
from runnerx.runner import Runner
from tests.model.tta_parts import NUM_SAMPLES, TtaAverageScores, TtaTinyClassifier, features
from tests.tools import load_tool

ROOT = Path(__file__).parents[2]

TTA_PIPELINE = [
    dict(
        type="TestTimeAug",
        transforms=[
            [dict(type="TtaReverse", reverse=True), dict(type="TtaReverse", reverse=False)],
            [dict(type="TtaPack")],
        ],
    )
]
CONFIG = dict(
    custom_imports=dict(imports=["tests.model.tta_parts"]),
    model=dict(type="TtaTinyClassifier"),
    test_dataloader=dict(
        batch_size=4,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=False),
        dataset=dict(type="TtaVectors", pipeline=[dict(type="TtaPack")]),
    ),
    test_cfg=dict(),
    test_evaluator=dict(type="Accuracy"),
    tta_model=dict(type="TtaAverageScores"),
    tta_pipeline=TTA_PIPELINE,
)


def write_config(path, **changes):
    cfg = {**copy.deepcopy(CONFIG), **changes}
    cfg = {key: value for key, value in cfg.items() if value is not None}
    path.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    return str(path)


def save_checkpoint(path):
    """A checkpoint of the tiny classifier (other weights than a fresh one); the model."""
    torch.manual_seed(7)
    model = TtaTinyClassifier()
    torch.save(dict(state_dict=model.state_dict(), meta=dict()), path)
    return model


def expected_scores(model):
    """Each sample's softmax scores on its reversed and plain features, averaged, by hand."""
    with torch.no_grad():
        return [
            (
                model.fc(features(i).flip(0)).softmax(dim=0) + model.fc(features(i)).softmax(dim=0)
            ).div(2)
            for i in range(NUM_SAMPLES)
        ]


def load(path):
    with open(path, "rb") as file:
        return pickle.load(file)


def test_tools_test_tta_merges_the_views_of_every_sample(tmp_path, run_in_repo):
    trained = save_checkpoint(tmp_path / "model.pth")
    config = write_config(tmp_path / "tta_cfg.py")
    out = tmp_path / "preds.pkl"
    args = ["--tta", "--out", str(out), "--work-dir", str(tmp_path / "work")]
    result = run_in_repo(
        [sys.executable, "tools/test.py", config, str(tmp_path / "model.pth"), *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    predictions = load(out)
    assert [p["index"] for p in predictions] == list(range(NUM_SAMPLES))  # dataset order
    assert [p["views"] for p in predictions] == [2] * NUM_SAMPLES
    for prediction, mean in zip(predictions, expected_scores(trained)):
        torch.testing.assert_close(prediction["pred_score"], mean)
    hits = sum(int(p["pred_score"].argmax()) == p["gt_label"] for p in predictions)
    assert f"accuracy/top1: {100 * hits / NUM_SAMPLES:.4f}" in result.stdout + result.stderr


@pytest.mark.parametrize("missing", ["tta_model", "tta_pipeline"])
def test_tools_test_tta_names_what_the_config_lacks(tmp_path, missing):
    config = write_config(tmp_path / "cfg.py", **{missing: None})
    with pytest.raises(SystemExit, match=f"--tta: .*needs {missing} in the config"):
        load_tool("test").main([config, "none.pth", "--tta", "--work-dir", str(tmp_path)])


def runner_cfg(tmp_path):
    cfg = Config(copy.deepcopy(CONFIG))
    cfg.work_dir = str(tmp_path / "work")
    cfg.load_from = str(tmp_path / "model.pth")
    out = str(tmp_path / "preds.pkl")
    cfg.test_evaluator = [dict(type="Accuracy"), dict(type="DumpResults", out_file_path=out)]
    return cfg


def test_build_runner_with_tta_wraps_the_loaded_model_when_the_test_starts(tmp_path):
    trained = save_checkpoint(tmp_path / "model.pth")
    cfg = runner_cfg(tmp_path)
    runner = build_runner_with_tta(cfg)
    assert cfg.test_dataloader.dataset.pipeline == TTA_PIPELINE
    plain = runner.model
    assert type(plain) is TtaTinyClassifier  # until the test starts
    runner.test()
    assert type(runner.model) is TtaAverageScores and runner.model.module is plain
    predictions = load(tmp_path / "preds.pkl")
    for prediction, mean in zip(predictions, expected_scores(trained), strict=True):
        torch.testing.assert_close(prediction["pred_score"], mean)

    runner.test()  # a second test keeps the one wrapper (MMEngine would wrap it again)
    assert runner.model.module is plain
    for prediction, mean in zip(load(tmp_path / "preds.pkl"), expected_scores(trained)):
        torch.testing.assert_close(prediction["pred_score"], mean)


def test_load_from_loads_a_plain_checkpoint_into_the_wrapped_model(tmp_path):
    trained = save_checkpoint(tmp_path / "model.pth")
    cfg = runner_cfg(tmp_path)
    use_tta_model(cfg)  # what --tta does: cfg.model is the wrapper from the start
    runner = Runner.from_cfg(cfg)
    runner.load_or_resume()
    assert type(runner.model) is TtaAverageScores
    assert torch.equal(runner.model.module.fc.weight, trained.fc.weight)

    # a tensor of another shape is skipped with a warning in the log, as for a plain model
    torch.save(
        dict(state_dict=dict(trained.state_dict(), **{"fc.bias": torch.zeros(7)})),
        tmp_path / "model.pth",
    )
    cfg.work_dir = str(tmp_path / "work2")
    runner = Runner.from_cfg(cfg)
    runner.load_or_resume()
    log = next(Path(cfg.work_dir).glob("*/*.log")).read_text()
    assert re.search(r"WARNING - 1 checkpoint tensor.* fc\.bias: checkpoint \(7,\)", log)
    assert torch.equal(runner.model.module.fc.weight, trained.fc.weight)


def test_build_runner_with_tta_needs_both_keys(tmp_path):
    for missing in ("tta_model", "tta_pipeline"):
        cfg = runner_cfg(tmp_path)
        cfg.pop(missing)
        with pytest.raises(KeyError, match=f"needs {missing} in the config"):
            build_runner_with_tta(cfg)


def test_prepare_tta_hook_builds_from_a_copy_of_its_config():
    tta_cfg = dict(type="TtaAverageScores")
    hook = PrepareTTAHook(tta_cfg)
    runner = type("FakeRunner", (), {})()
    runner.model = TtaTinyClassifier()
    inner = runner.model
    hook.before_test(runner)
    assert type(runner.model) is TtaAverageScores and runner.model.module is inner
    assert tta_cfg == dict(type="TtaAverageScores")  # MMEngine stores the model in it
    with pytest.raises(TypeError, match="tta_cfg must be the tta_model config dict"):
        PrepareTTAHook("TtaAverageScores")


def test_use_tta_model_rewrites_the_config_as_the_downstream_scripts_do():
    cfg = Config(copy.deepcopy(CONFIG))
    cfg.test_dataloader.dataset = dict(
        type="RepeatDataset", times=2, dataset=dict(type="TtaVectors", pipeline=[])
    )
    use_tta_model(cfg)
    assert cfg.model == dict(type="TtaAverageScores", module=dict(type="TtaTinyClassifier"))
    assert cfg.test_dataloader.dataset.dataset.pipeline == TTA_PIPELINE  # the innermost
    assert "pipeline" not in cfg.test_dataloader.dataset

    no_test = Config(dict(model=dict(type="TtaTinyClassifier"), tta_model={}, tta_pipeline=[]))
    with pytest.raises(KeyError, match="no test_dataloader.dataset dict"):
        use_tta_model(no_test)
