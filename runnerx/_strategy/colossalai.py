"""MMEngine's ``mmengine._strategy.colossalai`` path: its ``ColossalAIStrategy`` name, which
runnerx does not run (building one is an error saying what to use instead; see
:mod:`runnerx._strategy.distributed`)."""

from .distributed import ColossalAIStrategy

__all__ = ["ColossalAIStrategy"]
