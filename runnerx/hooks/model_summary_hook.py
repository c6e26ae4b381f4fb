"""ModelSummaryHook: logs what the model holds when training starts."""

from __future__ import annotations

from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.model.summary import checked_depth, model_summary
from runnerx.registry import HOOKS


@HOOKS.register_module()
class ModelSummaryHook(Hook):
    """Logs the model's parameter counts (total, trainable, frozen, size in MB) and a row per
    submodule down to ``max_depth`` levels (0: the totals line only) before training starts,
    as Lightning's model summary does. One of the default hooks; off with ``None``::

        default_hooks = dict(model_summary=dict(type='ModelSummaryHook', max_depth=2))
        default_hooks = dict(model_summary=None)
    """

    priority = "VERY_LOW"

    def __init__(self, max_depth: int = 1) -> None:
        self.max_depth = checked_depth(max_depth, "ModelSummaryHook: max_depth")

    def before_train(self, runner: Any) -> None:
        """Log the summary of the model being trained (unwrapped from DDP/FSDP)."""
        model = getattr(runner, "unwrapped_model", None)
        if model is None:  # a runner-like object of a user's own
            model = runner.model
        runner.logger.info(f"Model summary:\n{model_summary(model, self.max_depth)}")
