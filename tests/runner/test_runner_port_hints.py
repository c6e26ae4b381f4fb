"""The errors a user porting a Lightning project meets first say what to change: a val_step
that returns nothing, validation given in part or limited to no batch, a train_cfg without
by_epoch, an evaluation dataloader without a sampler."""

import pytest

from runnerx.data import build_dataloader
from runnerx.model.examples.digits_convnet import DigitsConvNet
from runnerx.registry import MODELS
from runnerx.runner import Runner
from runnerx.runner.loops import build_train_loop


@MODELS.register_module(force=True)
class PredictsNothing(DigitsConvNet):
    """A forward without a 'predict' branch, as a Lightning validation_step returns nothing."""

    def forward(self, inputs, data_samples=None, mode="tensor"):
        if mode == "predict":
            return None
        return super().forward(inputs, data_samples, mode)


@pytest.mark.parametrize("stage", ["val", "test"])
def test_a_step_returning_none_names_the_model_method_and_what_to_return(digits_cfg, stage):
    cfg = digits_cfg
    cfg.model.type = "PredictsNothing"
    cfg[f"{stage}_cfg"] = dict(limit_batches=1)
    cfg[f"{stage}_evaluator"] = dict(type="DumpResults", out_file_path="never.pkl")
    runner = Runner.from_cfg(cfg)
    with pytest.raises(TypeError) as error:
        getattr(runner, stage)()
    assert str(error.value).startswith(
        f"{stage}_evaluator reads the model's predictions (what PredictsNothing.{stage}_step "
        "returns) as a dict of batched values or a list of per-sample dicts, but got None; "
        "return e.g. dict(pred_score="
    )


def test_validation_given_in_part_says_how_to_complete_it_or_turn_it_off(digits_cfg):
    digits_cfg.val_cfg = None
    with pytest.raises(ValueError) as error:
        Runner.from_cfg(digits_cfg)
    assert str(error.value) == (
        "val: val_dataloader, val_evaluator given but val_cfg missing; set all of "
        "val_dataloader, val_cfg, val_evaluator for validation (val_cfg=dict() for the "
        "defaults), or to turn validation off, leave out val_dataloader, val_cfg and "
        "val_evaluator (or set all three to None)"
    )


def test_validation_turned_off_as_the_errors_say_trains_without_it(digits_cfg):
    digits_cfg.merge_from_dict(
        dict(val_dataloader=None, val_cfg=None, val_evaluator=None, fast_dev_run=2)
    )
    runner = Runner.from_cfg(digits_cfg)
    runner.train()
    assert runner.val_loop is None and runner.iter == 2


@pytest.mark.parametrize("value", [0, 0.0])
@pytest.mark.parametrize("stage", ["val", "test"])
def test_a_limit_of_no_batches_says_how_to_turn_the_stage_off(digits_cfg, stage, value):
    digits_cfg[f"{stage}_cfg"] = dict(limit_batches=value)
    runner = Runner.from_cfg(digits_cfg)
    noun = {"val": "validation", "test": "testing"}[stage]
    with pytest.raises(ValueError, match=rf"got {value}; to turn {noun} off, leave out {stage}_"):
        getattr(runner, f"{stage}_loop")


@pytest.mark.parametrize(
    ("train_cfg", "hint"),
    [
        (dict(max_epochs=3), "it has max_epochs, so add by_epoch=True"),
        (dict(max_iters=100), "it has max_iters, so add by_epoch=False"),
        (dict(), "add by_epoch=True with max_epochs=N, by_epoch=False with max_iters=N"),
    ],
)
def test_a_train_cfg_naming_no_loop_says_what_to_add(train_cfg, hint):
    with pytest.raises(KeyError, match=f"train_cfg needs type=... or by_epoch=True/False: {hint}"):
        build_train_loop(None, None, train_cfg)


@pytest.mark.parametrize(("key", "shuffle"), [("train", True), ("val", False), ("test", False)])
def test_a_missing_sampler_suggests_shuffling_for_training_only(key, shuffle):
    cfg = dict(batch_size=2, dataset=[1, 2, 3])
    with pytest.raises(KeyError) as error:
        build_dataloader(cfg, cfg_key=f"{key}_dataloader")
    assert f"{key}_dataloader.sampler is missing" in str(error.value)
    assert f"sampler=dict(type='DefaultSampler', shuffle={shuffle})" in str(error.value)
