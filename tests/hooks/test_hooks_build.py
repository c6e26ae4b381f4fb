"""build_hooks and format_hook_table: MMEngine's default_hooks/custom_hooks semantics."""

import pytest

from runnerx.config import Config
from runnerx.hooks import (
    DEFAULT_HOOKS,
    CheckpointHook,
    EmptyCacheHook,
    Hook,
    LoggerHook,
    build_hooks,
    format_hook_table,
)
from runnerx.hooks import build as hooks_build
from runnerx.registry import NotRegisteredError

DEFAULT_ORDER = [
    "RuntimeInfoHook",
    "IterTimerHook",
    "DistSamplerSeedHook",
    "LoggerHook",
    "ParamSchedulerHook",
    "CheckpointHook",
    "ModelSummaryHook",
    "PreemptionHook",
]


class ProbeHook(Hook):  # NORMAL priority
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        pass


def names(hooks):
    return [type(hook).__name__ for hook in hooks]


def test_the_defaults_in_priority_order():
    hooks = build_hooks()
    assert names(hooks) == DEFAULT_ORDER
    checkpoint = hooks[-3]
    assert checkpoint.interval == 1 and checkpoint.by_epoch


def test_none_turns_a_default_off_and_a_config_replaces_it():
    hooks = build_hooks(
        dict(timer=None, checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False))
    )
    assert names(hooks) == [n for n in DEFAULT_ORDER if n != "IterTimerHook"]
    assert (hooks[-3].interval, hooks[-3].by_epoch) == (5, False)


def test_a_default_without_type_is_merged_into_the_default_config():
    hooks = build_hooks(dict(logger=dict(interval=50), checkpoint=dict(max_keep_ckpts=3)))
    logger = next(h for h in hooks if isinstance(h, LoggerHook))
    checkpoint = next(h for h in hooks if isinstance(h, CheckpointHook))
    assert logger.interval == 50
    assert (checkpoint.interval, checkpoint.max_keep_ckpts) == (1, 3)


def test_new_names_in_default_hooks_and_custom_hooks_are_added_after_equal_priorities():
    hooks = build_hooks(
        dict(extra=dict(type=ProbeHook)), [dict(type="EmptyCacheHook"), ProbeHook()]
    )
    assert names(hooks) == [
        "RuntimeInfoHook",
        "IterTimerHook",
        "DistSamplerSeedHook",
        "ProbeHook",  # default_hooks.extra
        "EmptyCacheHook",  # the custom hooks, in their order
        "ProbeHook",
        "LoggerHook",
        "ParamSchedulerHook",
        "CheckpointHook",
        "ModelSummaryHook",
        "PreemptionHook",
    ]


def test_a_config_priority_overrides_the_class_priority():
    hooks = build_hooks(
        dict(checkpoint=dict(type="CheckpointHook", priority="HIGHEST")),
        [dict(type=ProbeHook, priority=95), dict(type="EmptyCacheHook", priority=40)],
    )
    assert names(hooks)[:3] == ["CheckpointHook", "RuntimeInfoHook", "EmptyCacheHook"]
    assert names(hooks)[-2:] == ["ProbeHook", "PreemptionHook"]  # 95, then LOWEST
    assert hooks[0].priority == "HIGHEST" and CheckpointHook.priority == "VERY_LOW"


def test_a_config_from_a_file_builds_and_is_left_unchanged():
    cfg = Config(
        dict(
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=20, priority="LOW"),
                param_scheduler=None,
            ),
            custom_hooks=[dict(type="EMAHook", momentum=0.001)],
        )
    )
    hooks = build_hooks(cfg.default_hooks, cfg.custom_hooks)
    assert "ParamSchedulerHook" not in names(hooks)
    assert cfg.default_hooks.logger.priority == "LOW"
    assert hooks[names(hooks).index("EMAHook")].ema_cfg["momentum"] == 0.001


def test_a_hook_config_with_a_priority_keeps_its_key_in_build_errors():
    # mmdet's EMAHook entry sets priority=49: its typos must still name cfg.custom_hooks.0
    cfg = Config(dict(custom_hooks=[dict(type="EMAHook", momentm=0.1, priority=49)]))
    with pytest.raises(TypeError, match=r"^while building cfg\.custom_hooks\.0 \(type='EMAHook'"):
        build_hooks(None, cfg.custom_hooks)
    assert cfg.custom_hooks[0].priority == 49  # the config is left as it was


@pytest.mark.parametrize(
    ("default_hooks", "custom_hooks", "error", "message"),
    [
        ([dict(type="LoggerHook")], None, TypeError, "default_hooks must be a dict"),
        (dict(logger=3), None, TypeError, r"default_hooks.logger must be a hook config .*got int"),
        (None, dict(type="EmptyCacheHook"), TypeError, "custom_hooks must be a list"),
        (None, [None], TypeError, r"custom_hooks\[0\] must be a hook config dict or a Hook"),
        (  # what --cfg-options "custom_hooks=[{'type':'EMAHook'}]" gives
            None,
            ["{'type':'EMAHook'}"],
            TypeError,
            r"got str: .*--cfg-options gives no dicts.*custom_hooks = \[dict\(type=\.\.\.\)\]",
        ),
        (
            None,
            [dict(type="EmptyCacheHook", priority="SOON")],
            ValueError,
            r"custom_hooks\[0\].priority: unknown hook priority 'SOON'",
        ),
        (
            None,
            [dict(type="EmptyCacheHook", priority=101)],
            ValueError,
            r"custom_hooks\[0\].priority: priority must be between 0 and 100",
        ),
        (
            None,
            [dict(type="collections.OrderedDict")],
            TypeError,
            "built a OrderedDict, which is not",
        ),
        (None, [dict(type="CheckpointHok")], NotRegisteredError, "CheckpointHook"),
    ],
)
def test_bad_configs_are_named(default_hooks, custom_hooks, error, message):
    with pytest.raises(error, match=message):
        build_hooks(default_hooks, custom_hooks)


def test_the_default_configs_are_not_changed_by_building():
    before = {name: dict(cfg) for name, cfg in DEFAULT_HOOKS.items()}
    build_hooks(dict(checkpoint=dict(max_keep_ckpts=2), logger=None))
    assert before == DEFAULT_HOOKS


def test_the_table_lists_each_point_in_run_order_with_the_hooks_acting_there():
    class Numbered(Hook):
        priority = 45

        def before_run(self, runner):
            pass

    table = format_hook_table([Numbered(), LoggerHook(), EmptyCacheHook(after_iter=True)])
    sections = table.split("\n -------------------- ")
    points = [section.strip().splitlines()[0] for section in sections if section.strip()]
    assert points == [
        "before_run:",
        "before_train:",
        "after_train_iter:",
        "after_train_epoch:",
        "after_val_iter:",
        "after_val_epoch:",
        "after_test_iter:",
        "after_test_epoch:",
        "after_run:",
    ]
    assert "before_run:\n(45          ) Numbered\n(BELOW_NORMAL) LoggerHook\n" in table
    assert "after_train_iter:\n(BELOW_NORMAL) LoggerHook\n(NORMAL      ) EmptyCacheHook" in table
    assert "before_train_epoch" not in table


@pytest.fixture
def build_warnings(logged_warnings):
    """The warnings build_hooks logs, caught at its own logger."""
    return logged_warnings(hooks_build.__name__)


def test_a_default_hook_emptied_by_delete_builds_the_default_and_says_so(tmp_path, build_warnings):
    (tmp_path / "base.py").write_text(
        "default_hooks = dict(checkpoint=dict(type='CheckpointHook', interval=2, "
        "max_keep_ckpts=2))\n"
    )
    (tmp_path / "child.py").write_text(
        "_base_ = './base.py'\ndefault_hooks = dict(checkpoint=dict(_delete_=True))\n"
    )
    cfg = Config.fromfile(tmp_path / "child.py")
    hooks = build_hooks(cfg.default_hooks)
    (checkpoint,) = [hook for hook in hooks if isinstance(hook, CheckpointHook)]
    assert (checkpoint.interval, checkpoint.max_keep_ckpts) == (1, -1)
    assert build_warnings == [
        "default_hooks.checkpoint is empty, so the built-in CheckpointHook(interval=1) is "
        "used; set it to None to turn that hook off"
    ]


def test_default_hook_entries_with_settings_are_not_warned_of(build_warnings):
    build_hooks(dict(logger=dict(interval=5), checkpoint=None))
    assert build_warnings == []


def test_a_custom_hook_of_a_default_hooks_class_is_warned_of(build_warnings):
    hooks = build_hooks(None, [dict(type="EMAHook"), dict(type="ParamSchedulerHook")])
    assert sum(type(hook).__name__ == "ParamSchedulerHook" for hook in hooks) == 2  # both run
    assert build_warnings == [
        "custom_hooks[1] is a ParamSchedulerHook, as default_hooks.param_scheduler is: both "
        "run, so its work is done twice; configure the one in default_hooks.param_scheduler, "
        "or set default_hooks.param_scheduler=None to keep only the custom one"
    ]
    build_hooks(dict(param_scheduler=None), [dict(type="ParamSchedulerHook")])
    assert len(build_warnings) == 1  # no second warning once the default is off
