"""``--cfg-options`` checked against the config: errors that name the option, and a warning for
a key that lands where nothing reads it (``max_epochs=3`` beside ``train_cfg.max_epochs``)."""

import argparse
import copy
import re
import warnings
from pathlib import Path

import pytest
from mmengine.config import Config as MMConfig

from runnerx import Config
from runnerx.config import ConfigKeyError
from runnerx.runner.cli import add_common_args, load_config

DIGITS = Path(__file__).parents[2] / "configs/digits_convnet.py"


# the tools' load_config sets LOCAL_RANK: undone after each test
pytestmark = pytest.mark.usefixtures("keep_local_rank")


def load_from_command_line(*options: str) -> Config:
    """The config as tools/train.py builds it from ``CONFIG --cfg-options OPTIONS``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    add_common_args(parser)
    args = parser.parse_args([str(DIGITS), "--work-dir", "unused", "--cfg-options", *options])
    return load_config(args)


def merged_by_mmengine(options: dict) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = MMConfig.fromfile(DIGITS)
    theirs.merge_from_dict(copy.deepcopy(options))
    return theirs.to_dict()


def test_a_key_that_exists_elsewhere_warns_with_the_option_to_use():
    message = (
        "--cfg-options max_epochs=3 adds a key the config did not have; the config has "
        "train_cfg.max_epochs (did you mean train_cfg.max_epochs=3?)"
    )
    with pytest.warns(UserWarning, match=re.escape(message)):
        cfg = load_from_command_line("max_epochs=3")
    # only a warning: the key is added as MMEngine adds it, train_cfg is unchanged
    assert cfg.max_epochs == 3 and cfg.train_cfg.max_epochs == 8
    ours = {
        key: value for key, value in cfg.to_dict().items() if key not in ("launcher", "work_dir")
    }
    assert ours == merged_by_mmengine({"max_epochs": 3})


@pytest.mark.parametrize(
    ("option", "suggestion"),
    [
        ("optimizer.lr=0.01", "optim_wrapper.optimizer (did you mean optim_wrapper.optimizer.lr"),
        ("interval=5", "default_hooks.logger.interval=5 or default_hooks.checkpoint.interval=5?"),
        ("model.seed=1", "randomness.seed (did you mean randomness.seed=1?)"),
    ],
    ids=["missing-parent", "two-places", "nested-key"],
)
def test_the_warning_names_where_the_key_is(option, suggestion):
    with pytest.warns(UserWarning, match=re.escape(suggestion)):
        load_from_command_line(option)


@pytest.mark.parametrize(
    "options",
    [
        ["train_cfg.max_epochs=3", "param_scheduler.1.end=3", "model.channels=[8,16]"],
        ["brand_new=1", "model.init_cfg.type=Kaiming", "randomness.diff_rank_seed=True"],
    ],
    ids=["existing-keys", "new-keys-named-nowhere-else"],
)
def test_no_warning_for_keys_that_exist_or_are_new_everywhere(options):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_from_command_line(*options)


def test_merge_from_dict_in_code_adds_keys_without_a_warning():
    cfg = Config.fromfile(DIGITS)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cfg.merge_from_dict({"max_epochs": 3})
    assert cfg.max_epochs == 3


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            {"optim_wrapper.optimizer.lr.value": 1},
            TypeError,
            "--cfg-options optim_wrapper.optimizer.lr.value=1: optim_wrapper.optimizer.lr is a "
            "float (0.1), so nothing can be set below it; did you mean "
            "optim_wrapper.optimizer.lr=1?",
        ),
        (
            {"param_scheduler.5.end": 3},
            KeyError,
            "--cfg-options param_scheduler.5.end=3: param_scheduler has 2 entries (indexes 0-1)",
        ),
        (
            {"param_scheduler.end": 3},
            TypeError,
            "--cfg-options param_scheduler.end=3: param_scheduler is a list, so the key after "
            "it must be an index: param_scheduler has 2 entries (indexes 0-1)",
        ),
        (
            {"load_from.path": "x.pth"},
            TypeError,
            "--cfg-options load_from.path=x.pth: load_from is None, so nothing can be set below "
            "it; to make it a dict, add the option load_from._delete_=True",
        ),
        (
            {"model.channels.0": 8},
            TypeError,
            "--cfg-options model.channels.0=8: model.channels is a tuple ((16, 32)), so nothing "
            "can be set below it; set it whole: model.channels=(...)",
        ),
    ],
    ids=["below-a-float", "index-past-the-end", "key-in-a-list", "below-none", "in-a-tuple"],
)
def test_an_option_that_cannot_merge_names_itself(options, error, message):
    cfg = Config.fromfile(DIGITS)
    with pytest.raises(error, match=re.escape(message)):
        cfg.merge_from_dict(options, source="--cfg-options")
    with pytest.raises(error):  # the same error type as MMEngine's
        merged_by_mmengine(options)


def test_a_key_past_the_end_of_a_list_names_the_source_in_code():
    cfg = Config.fromfile(DIGITS)
    with pytest.raises(ConfigKeyError, match=re.escape("merge_from_dict param_scheduler.2.end=3")):
        cfg.merge_from_dict({"param_scheduler.2.end": 3})


def test_the_delete_hint_works_and_merges_as_mmengine():
    options = {"load_from._delete_": True, "load_from.path": "x.pth"}
    cfg = Config.fromfile(DIGITS)
    cfg.merge_from_dict(copy.deepcopy(options), source="--cfg-options")
    assert cfg.load_from == {"path": "x.pth"}
    assert cfg.to_dict() == merged_by_mmengine(options)


def test_delete_on_a_list_entry_replaces_it():
    # MMEngine merges into the entry and keeps `_delete_` there; here it replaces the entry,
    # as `_delete_` on a dict key does
    cfg = load_from_command_line(
        "param_scheduler.1._delete_=True", "param_scheduler.1.type=ConstantLR"
    )
    assert cfg.param_scheduler[1] == {"type": "ConstantLR"}
    assert cfg.param_scheduler[0].type == "LinearLR" and cfg.param_scheduler[0].end == 20
    cfg.merge_from_dict({"param_scheduler.0._delete_": True, "param_scheduler.0.end": 3})
    assert cfg.param_scheduler[0] == {"end": 3}
    cfg.merge_from_dict({"param_scheduler.1.factor": 0.5})  # without it: merged as before
    assert cfg.param_scheduler[1] == {"type": "ConstantLR", "factor": 0.5}
