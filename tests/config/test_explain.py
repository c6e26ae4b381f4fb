"""Config.explain and tools/print_config.py --explain: where did a value come from?"""

import os
import sys
from pathlib import Path

import pytest

from runnerx import Config

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parents[2]


def where(origin) -> str:
    return origin.where.split(":")[0].replace(os.sep, "/").split("data/")[-1]


def test_chain_through_bases_and_command_line():
    cfg = Config.fromfile(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    cfg.merge_from_dict({"optim_wrapper.optimizer.lr": 0.05}, source="--cfg-options")
    explanation = cfg.explain("optim_wrapper.optimizer.lr")
    assert explanation.value == 0.05
    steps = [(where(o), o.code, o.relation) for o in explanation.origins]
    assert steps == [
        ("mm/_base_/schedules/schedule_1x.py", "lr=0.02", "sets"),
        ("mm/faster_rcnn_r101_fpn_2x_voc.py", "lr=0.01", "sets"),
        ("--cfg-options", "optim_wrapper.optimizer.lr=0.05", "sets"),
    ]
    base_line = (DATA / "mm/_base_/schedules/schedule_1x.py").read_text().splitlines()
    line = int(explanation.origins[0].where.rsplit(":", 1)[1])
    assert "lr=0.02" in base_line[line - 1]
    text = str(explanation)
    assert text.startswith("optim_wrapper.optimizer.lr = 0.05")
    assert "(overrides 1)" in text and "(overrides 2)" in text


def test_in_place_edits_and_references_are_in_the_chain():
    cfg = Config.fromfile(DATA / "refs/grandchild.py")
    origins = cfg.explain("model.backbone.channels").origins
    assert [(where(o), o.code) for o in origins] == [
        ("refs/base.py", "channels=64"),
        ("refs/child.py", "channels=_base_.model.backbone.channels * 2"),
        ("refs/grandchild.py", "_base_.model.backbone.channels = 256"),
    ]
    scale = cfg.explain("train_pipeline.1.scale")
    assert scale.value == (800, 600)
    assert [o.code for o in scale.origins][-1] == "_base_.train_pipeline[1]['scale'] = (800, 600)"


def test_delete_shows_as_a_replacement_and_merges_as_merges():
    cfg = Config.fromfile(DATA / "deep/level4.py")
    explanation = cfg.explain("optim_wrapper.optimizer")
    assert [o.merges for o in explanation.origins] == [True, True, False]
    assert "_delete_=True" in explanation.origins[-1].code
    text = str(explanation)
    assert "(merged into 1)" in text and "(overrides 2)" in text


def test_a_parent_replaced_as_a_whole_counts_for_its_children():
    cfg = Config.fromfile(DATA / "refs/child.py")
    origins = cfg.explain("test_pipeline.1.scale").origins
    assert [(where(o), o.relation, o.key) for o in origins] == [
        ("refs/child.py", "replaces", "test_pipeline")
    ]
    assert origins[0].code == "test_pipeline = _base_.train_pipeline"
    deleted = Config.fromfile(DATA / "delete/child.py").explain("runner").origins
    assert [(where(o), o.merges) for o in deleted] == [
        ("delete/base.py", True),
        ("delete/child.py", False),
    ]


def test_parts_set_elsewhere_are_listed_for_a_dict():
    cfg = Config.fromfile(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    cfg.merge_from_dict({"model.backbone.frozen_stages": 2}, source="--cfg-options")
    origins = cfg.explain("model.backbone").origins
    assert [o.relation for o in origins] == ["sets", "sets", "part"]
    assert origins[-1].key == "model.backbone.frozen_stages"


def test_json_and_yaml_sources_are_explained_without_lines():
    cfg = Config.fromfile(DATA / "formats/child.py")
    origins = cfg.explain("model.depth").origins
    assert [where(o) for o in origins] == ["formats/base.json", "formats/middle.yaml"]


def test_unknown_key_suggests_close_matches():
    cfg = Config.fromfile(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    with pytest.raises(KeyError, match="Did you mean 'optimizer'"):
        cfg.explain("optim_wrapper.optimzer.lr")
    with pytest.raises(KeyError, match="list of 5 items"):
        cfg.explain("train_pipeline.7")


def test_config_not_from_a_file():
    explanation = Config(dict(a=1)).explain("a")
    assert explanation.origins == [] and "not read from a file" in str(explanation)


@pytest.fixture
def run_tool(run_in_repo):
    """``run_tool(*args)``: ``python tools/print_config.py *args``, its exit status unchecked."""
    return lambda *args: run_in_repo([sys.executable, str(ROOT / "tools/print_config.py"), *args])


def test_print_config_prints_loadable_python(tmp_path, run_tool):
    result = run_tool(
        "configs/digits_convnet.py",
        "--cfg-options",
        "train_cfg.max_epochs=3",
        "model.channels=[8,16]",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Config:\n")
    dumped = tmp_path / "printed.py"
    dumped.write_text(result.stdout.split("\n", 1)[1])
    printed = Config.fromfile(dumped)
    assert printed.train_cfg.max_epochs == 3 and printed.model.channels == [8, 16]
    assert printed.to_dict() == _expected_digits()


def _expected_digits():
    cfg = Config.fromfile(ROOT / "configs/digits_convnet.py")
    cfg.merge_from_dict({"train_cfg.max_epochs": 3, "model.channels": [8, 16]})
    return cfg.to_dict()


def test_print_config_explain(run_tool):
    result = run_tool(
        "configs/digits_convnet.py",
        "--explain",
        "train_cfg.max_epochs",
        "--cfg-options",
        "train_cfg.max_epochs=3",
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "train_cfg.max_epochs = 3"
    assert "configs/_base_/schedules/sgd_10e.py:" in result.stdout
    assert "configs/digits_convnet.py:" in result.stdout
    assert lines[-1].strip().startswith("3. --cfg-options")


def test_print_config_explain_unknown_key_exits_with_help(run_tool):
    result = run_tool("configs/digits_convnet.py", "--explain", "train_cfg.max_epoch")
    assert result.returncode == 2
    assert "Did you mean 'max_epochs'" in result.stderr
