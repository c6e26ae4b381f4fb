"""Bad hook arguments raise runnerx's error type that is also MMEngine's (most often the
AssertionError of its ``assert``), so that ``except`` clauses written for MMEngine still catch
them; and CheckpointHook's ``greater_keys`` / ``less_keys`` / ``file_backend`` as MMEngine's."""

from types import SimpleNamespace

import pytest

from runnerx.fileio import LocalBackend
from runnerx.hooks import CheckpointHook, EMAHook, LoggerHook, get_priority


@pytest.mark.parametrize(
    ("priority", "mmengine_type"),
    [([10], TypeError), (1.5, TypeError), ("VERY_SOON", KeyError)],
)
def test_get_priority_raises_mmengines_type_too(priority, mmengine_type):
    with pytest.raises(ValueError, match="unknown hook priority") as raised:
        get_priority(priority)
    assert isinstance(raised.value, mmengine_type)


def test_a_bool_priority_is_a_value_and_type_error():
    with pytest.raises(ValueError, match="priority must be a name or an int") as raised:
        get_priority(True)
    assert isinstance(raised.value, TypeError)


@pytest.mark.parametrize(
    ("kwargs", "types", "message"),
    [
        ({"interval": "100"}, (ValueError, TypeError), "interval must be a positive int"),
        ({"interval_exp_name": "100"}, (ValueError, TypeError), "interval_exp_name must be"),
        ({"interval": 0}, (ValueError,), "interval must be a positive int"),
        ({"ignore_last": "False"}, (TypeError,), "ignore_last must be True or False"),
        ({"keep_local": 1}, (TypeError,), "keep_local must be True or False"),
    ],
)
def test_logger_hook_checks_its_arguments_types_as_mmengine(kwargs, types, message):
    with pytest.raises(types[0], match=message) as raised:
        LoggerHook(**kwargs)
    assert all(isinstance(raised.value, kind) for kind in types)


@pytest.mark.parametrize(
    ("kwargs", "types", "message"),
    [
        ({"save_best": {"acc": "acc"}}, (TypeError,), "save_best must be a str"),
        ({"save_best": ["auto", "acc"]}, (ValueError,), "'auto' cannot be combined"),
        ({"save_best": ["acc", "acc"]}, (ValueError,), "save_best has duplicates"),
        ({"save_best": ["acc"], "rule": 1}, (ValueError,), "rule must be 'greater'"),
        ({"save_best": ["acc"], "rule": ["greater", "less"]}, (ValueError,), "one per save_best"),
        ({"greater_keys": 3}, (TypeError,), "greater_keys must be a str"),
        ({"less_keys": ["loss", 1]}, (TypeError,), "less_keys must be a str"),
        ({"published_keys": ["meta", "meta"]}, (ValueError,), "published_keys has duplicates"),
    ],
)
def test_checkpoint_hooks_asserted_arguments_are_also_assertion_errors(kwargs, types, message):
    with pytest.raises(AssertionError, match=message) as raised:
        CheckpointHook(**kwargs)
    assert all(isinstance(raised.value, kind) for kind in types)


def test_checkpoint_hooks_unknown_rule_is_mmengines_key_error_too():
    with pytest.raises(KeyError) as raised:
        CheckpointHook(save_best="acc", rule="bigger")
    assert isinstance(raised.value, ValueError)
    assert (
        str(raised.value) == "CheckpointHook: rule must be 'greater', 'less' or None, got 'bigger'"
    )


def test_greater_and_less_keys_keep_mmengines_types():
    assert CheckpointHook(greater_keys="acc").greater_keys == ("acc",)
    assert CheckpointHook(greater_keys=["acc"]).greater_keys == ["acc"]
    assert CheckpointHook(less_keys="loss_cls").less_keys == ("loss_cls",)
    assert CheckpointHook(less_keys=("a", "b")).less_keys == ("a", "b")
    hook = CheckpointHook(save_best="psnr", greater_keys="psnr")
    assert hook.rules == {"psnr": "greater"}


def test_checkpoint_hook_has_mmengines_file_backend():
    assert isinstance(CheckpointHook().file_backend, LocalBackend)


@pytest.mark.parametrize(
    ("kwargs", "types", "message"),
    [
        ({"begin_iter": -1}, (ValueError, AssertionError), "begin_iter must be an int >= 0"),
        ({"begin_epoch": -1}, (ValueError, AssertionError), "begin_epoch must be an int >= 0"),
        ({"begin_iter": 2, "begin_epoch": 1}, (ValueError, AssertionError), "not both"),
        ({"begin_iter": "3"}, (ValueError, TypeError), "begin_iter must be an int >= 0"),
    ],
)
def test_ema_hooks_begin_arguments_raise_mmengines_type_too(kwargs, types, message):
    with pytest.raises(types[0], match=message) as raised:
        EMAHook(**kwargs)
    assert all(isinstance(raised.value, kind) for kind in types)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"begin_epoch": 3}, "begin_epoch=3 is after the last epoch"),
        ({"begin_iter": 11}, "begin_iter=11 is after the last iteration"),
    ],
)
def test_ema_hooks_begin_after_the_end_is_an_assertion_error_too(kwargs, message):
    runner = SimpleNamespace(max_epochs=2, max_iters=10)
    with pytest.raises(AssertionError, match=message) as raised:
        EMAHook(**kwargs).before_train(runner)
    assert isinstance(raised.value, ValueError)
