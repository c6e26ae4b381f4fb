"""Same config in, same dict out: runnerx's Config against mmengine-lite's, as the oracle."""

import warnings
from pathlib import Path

import pytest
from mmengine.config import Config as MMConfig
from mmengine.config import DictAction as MMDictAction

from runnerx import Config, DictAction
from runnerx.config import parse_option_value

DATA = Path(__file__).parent / "data"

TREES = [
    "mm/faster_rcnn_r50_fpn_1x_coco.py",  # four bases in a list
    "mm/faster_rcnn_r101_fpn_2x_voc.py",  # a base that itself has four bases
    "deep/level0.py",
    "deep/level1.py",
    "deep/level2.py",  # _delete_ on nested dicts
    "deep/sub/level3.py",  # a base in the parent folder
    "deep/level4.py",  # five levels deep
    "refs/base.py",
    "refs/child.py",  # {{_base_.x}}, _base_.x as a variable, in-place edit of an inherited list
    "refs/grandchild.py",
    "delete/child.py",  # _delete_ at top level, lists replaced, a dict over a scalar
    "formats/base.json",
    "formats/middle.yaml",  # yaml inheriting json
    "formats/child.py",  # python inheriting yaml
    "formats/child.json",  # json inheriting yaml with a {{_base_}} reference
    "vars/cfg.py",  # {{ fileDirname }} and {{$ENV:default}}
    "../../../configs/digits_convnet.py",  # the example tree users start from
]


def load_both(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = MMConfig.fromfile(path)
    return Config.fromfile(path), theirs


@pytest.mark.parametrize("tree", TREES)
def test_fromfile_gives_the_same_dict(tree):
    ours, theirs = load_both(DATA / tree)
    assert ours.to_dict() == theirs.to_dict()
    assert _types(ours.to_dict()) == _types(theirs.to_dict())


def _types(value):
    """The container types of a tree, so that a tuple turned list is caught too."""
    if isinstance(value, dict):
        return {key: _types(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_types(item) for item in value])
    return type(value).__name__


def test_environment_variables_are_used_the_same(monkeypatch):
    monkeypatch.setenv("RUNNERX_TEST_DATA_ROOT", "/mnt/data")
    monkeypatch.setenv("RUNNERX_TEST_NUM_CLASSES", "21")
    ours, theirs = load_both(DATA / "vars/cfg.py")
    assert ours.to_dict() == theirs.to_dict()
    assert ours.num_classes == 21 and ours.data_root == "/mnt/data/images"
    assert ours.env_variables == theirs.env_variables


OPTIONS = [
    ["model.backbone.depth=101", "train_cfg.max_epochs=3"],
    ["optim_wrapper.optimizer.lr=0.005", "optim_wrapper.optimizer.momentum=0.95"],
    ["train_pipeline.2.scale=[1000,600]", "train_pipeline.3.prob=0.25"],
    ["model.neck.in_channels=[128,256,512,1024]", "model.backbone.out_indices=(1,2,3)"],
    ["default_hooks.logger.interval=10", "load_from=None", "resume=True"],
    ["new_key.nested.value=1e-4", "work_dir=work_dirs/x"],
    ["train_dataloader.dataset.pipeline.1.with_bbox=false"],
    ["param_scheduler.1.milestones=[7,10]", "param_scheduler.0.end=100"],
]


@pytest.mark.parametrize("options", OPTIONS)
def test_cfg_options_give_the_same_dict(options):
    import argparse

    parsed = {}
    for action_cls, target in ((DictAction, "ours"), (MMDictAction, "theirs")):
        parser = argparse.ArgumentParser()
        parser.add_argument("--cfg-options", nargs="+", action=action_cls)
        parsed[target] = parser.parse_args(["--cfg-options", *options]).cfg_options
    assert parsed["ours"] == parsed["theirs"]

    ours, theirs = load_both(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    ours.merge_from_dict(parsed["ours"])
    theirs.merge_from_dict(parsed["theirs"])
    assert ours.to_dict() == theirs.to_dict()


def test_cfg_option_dicts_merge_and_delete_the_same():
    options = {
        "model.backbone": dict(_delete_=True, type="Swin", depth=(2, 2, 6, 2)),
        "optim_wrapper": dict(clip_grad=None),
        "train_pipeline.0": dict(type="LoadFromMemory"),
    }
    ours, theirs = load_both(DATA / "mm/faster_rcnn_r101_fpn_2x_voc.py")
    import copy

    ours.merge_from_dict(copy.deepcopy(options))
    theirs.merge_from_dict(copy.deepcopy(options))
    assert ours.to_dict() == theirs.to_dict()


def test_cross_package_base_gets_the_package_scope(tmp_path, monkeypatch):
    package = tmp_path / "mmpretrain"
    configs = package / ".mim" / "configs" / "_base_"
    (configs / "models").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / ".mim" / "model-index.yml").write_text("Import: []\n")  # mmengine reads it
    (configs / "models" / "resnet.py").write_text(
        "model = dict(type='ImageClassifier', backbone=dict(type='ResNet', depth=18))\n"
        "optim = dict(lr=0.1)\n"
        "pipeline = [dict(type='LoadImage'), dict(type='Resize', size=224)]\n"
    )
    (configs / "rt.py").write_text(
        "default_scope = 'mmpretrain'\nhooks = dict(log=dict(type='Log', _scope_='mmengine'))\n"
    )
    child = tmp_path / "child.py"
    child.write_text(
        "_base_ = ['mmpretrain::_base_/models/resnet.py', 'mmpretrain::_base_/rt.py']\n"
        "model = dict(backbone=dict(depth=50))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    ours, theirs = load_both(child)
    assert ours.to_dict() == theirs.to_dict()
    assert ours.model._scope_ == "mmpretrain"
    assert "_scope_" not in ours.model.backbone
    assert [step._scope_ for step in ours.pipeline] == ["mmpretrain", "mmpretrain"]
    assert ours.hooks.log._scope_ == "mmengine"


@pytest.mark.parametrize(
    "text",
    [
        "1",
        "-2",
        "0.5",
        "1e-3",
        "true",
        "False",
        "None",
        "abc",
        "[1,2]",
        "(1,2)",
        "a,b",
        "[(1,2),(3,4)]",
        "[[a,b],c]",
        "[]",
        "()",
        "1,",
        "[1,2,]",
        "(1,)",
    ],
)
def test_option_values_parse_the_same(text):
    assert parse_option_value(text) == MMDictAction._parse_iterable(text)
