"""MMEngine's ``mmengine._strategy.deepspeed`` path: its ``DeepSpeedStrategy`` name, which
runnerx does not run (building one is an error saying what to use instead; see
:mod:`runnerx._strategy.distributed`)."""

from .distributed import DeepSpeedStrategy

__all__ = ["DeepSpeedStrategy"]
