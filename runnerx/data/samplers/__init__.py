"""Samplers: which dataset indices each rank reads, in what order, from where to resume."""

from runnerx.data.samplers.base import ResumableSampler
from runnerx.data.samplers.default import DefaultSampler
from runnerx.data.samplers.infinite import InfiniteSampler

__all__ = ["DefaultSampler", "InfiniteSampler", "ResumableSampler"]
