"""MMEngine's ``mmengine.hooks.test_time_aug_hook`` path: ``PrepareTTAHook`` and
``build_runner_with_tta`` are :mod:`runnerx.hooks.prepare_tta_hook`'s."""

from runnerx.hooks.prepare_tta_hook import PrepareTTAHook, build_runner_with_tta

__all__ = ["PrepareTTAHook", "build_runner_with_tta"]
