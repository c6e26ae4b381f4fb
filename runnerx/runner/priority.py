"""MMEngine's ``mmengine.runner.priority`` path: hook priorities, ``Priority`` and
``get_priority`` (see :mod:`runnerx.hooks.hook`)."""

from runnerx.hooks.hook import Priority, get_priority

__all__ = ["Priority", "get_priority"]
