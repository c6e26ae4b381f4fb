"""Hooks: code that runs at fixed points of a run (see docs/hooks.md).

Importing this package registers the built-in hooks in ``HOOKS``; the registry imports it the
first time it is looked up.
"""

from .build import DEFAULT_HOOKS, build_hooks, check_hook_points, format_hook_table
from .checkpoint_hook import CheckpointHook
from .early_stopping_hook import EarlyStoppingHook
from .ema_hook import EMAHook
from .empty_cache_hook import EmptyCacheHook
from .hook import HOOK_POINTS, PRIORITIES, Hook, get_priority
from .iter_timer_hook import IterTimerHook
from .logger_hook import LoggerHook
from .model_summary_hook import ModelSummaryHook
from .naive_visualization_hook import NaiveVisualizationHook
from .param_scheduler_hook import ParamSchedulerHook
from .preemption_hook import PREEMPTED_EXIT_CODE, PreemptionHook, preempted_by
from .prepare_tta_hook import PrepareTTAHook, build_runner_with_tta
from .profiler_hook import ProfilerHook
from .runtime_info_hook import RuntimeInfoHook
from .sampler_seed_hook import DistSamplerSeedHook
from .sync_buffers_hook import SyncBuffersHook

__all__ = [
    "DEFAULT_HOOKS",
    "HOOK_POINTS",
    "PREEMPTED_EXIT_CODE",
    "PRIORITIES",
    "CheckpointHook",
    "DistSamplerSeedHook",
    "EMAHook",
    "EarlyStoppingHook",
    "EmptyCacheHook",
    "Hook",
    "IterTimerHook",
    "LoggerHook",
    "ModelSummaryHook",
    "NaiveVisualizationHook",
    "ParamSchedulerHook",
    "PreemptionHook",
    "PrepareTTAHook",
    "ProfilerHook",
    "RuntimeInfoHook",
    "SyncBuffersHook",
    "build_hooks",
    "build_runner_with_tta",
    "check_hook_points",
    "format_hook_table",
    "get_priority",
    "preempted_by",
]
