"""MMEngine's ``mmengine.dataset.sampler`` path: runnerx's resumable DefaultSampler and
InfiniteSampler (see :mod:`runnerx.data.samplers`)."""

from runnerx.data.samplers import DefaultSampler, InfiniteSampler

__all__ = ["DefaultSampler", "InfiniteSampler"]
