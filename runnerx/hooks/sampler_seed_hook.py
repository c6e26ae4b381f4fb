"""DistSamplerSeedHook: gives the training sampler the epoch number, so each epoch shuffles anew."""

from __future__ import annotations

from typing import Any

from runnerx.hooks.hook import Hook
from runnerx.registry import HOOKS


@HOOKS.register_module()
class DistSamplerSeedHook(Hook):
    """Calls ``set_epoch(runner.epoch)`` on the train dataloader's sampler before each epoch.

    A sampler that shuffles with ``seed + epoch`` (DistributedSampler, runnerx's samplers) gives
    every rank the same new order each epoch only when told the epoch. The sampler inside the
    dataloader's batch sampler is told too when it is another object. One of the default hooks:
    ``default_hooks=dict(sampler_seed=dict(type='DistSamplerSeedHook'))``.
    """

    priority = "NORMAL"

    def before_train_epoch(self, runner: Any) -> None:
        """Tell the samplers the epoch that starts."""
        dataloader = runner.train_dataloader
        sampler = getattr(dataloader, "sampler", None)
        inner = getattr(getattr(dataloader, "batch_sampler", None), "sampler", None)
        for candidate in (sampler, None if inner is sampler else inner):
            set_epoch = getattr(candidate, "set_epoch", None)
            if callable(set_epoch):
                set_epoch(runner.epoch)
