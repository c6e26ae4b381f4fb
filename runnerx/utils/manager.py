"""ManagerMixin: named, process-wide instances of a class, one of which is current.

MessageHub, Visualizer and DefaultScope are built on it, as in MMEngine: code that cannot
reach the Runner asks ``MessageHub.get_current_instance()`` for the run's hub.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from typing import Any, TypeVar

from runnerx.utils.errors import TypeAssertionError, ValueAssertionError

_lock = threading.RLock()
T = TypeVar("T", bound="ManagerMixin")


class ManagerMeta(type):
    """The metaclass of :class:`ManagerMixin`: gives each class its own instances and current
    instance, and refuses a class whose ``__init__`` takes no ``name`` argument."""

    def __init__(cls, *args: Any) -> None:
        super().__init__(*args)
        if "name" not in inspect.signature(cls.__init__).parameters:
            raise TypeAssertionError(
                f"{cls.__qualname__}.__init__ must take a `name` argument: ManagerMixin "
                "classes are created by name through get_instance(name, ...)"
            )
        cls._instances: dict[str, Any] = {}
        cls._current: Any = None
        # this class and its managed bases: an instance is found through each of them
        cls._managers = (cls, *(c for c in cls.__mro__[1:] if getattr(c, "_managers", ())))


class ManagerMixin(metaclass=ManagerMeta):
    """Base of classes whose instances are reached by name from anywhere in the process.

    .. code-block:: python

        class Tracker(ManagerMixin):
            def __init__(self, name: str = 'tracker', depth: int = 1):
                super().__init__(name)
                self.depth = depth

        first = Tracker.get_instance('run1', depth=2)      # created; now current
        assert Tracker.get_instance('run1') is first        # looked up
        assert Tracker.get_current_instance() is first      # the newest created
        assert Tracker.check_instance_created('run1')

    The current instance is the one created last (:meth:`make_current` picks another,
    which then is also the one found under its name). An
    instance of a subclass is also found through its managed bases, so
    ``Visualizer.get_current_instance()`` returns the newest ``DetLocalVisualizer`` too (MMEngine
    does this for Visualizer only).
    """

    def __init__(self, name: str = "", **kwargs: Any) -> None:
        if not isinstance(name, str):
            raise TypeAssertionError(f"{type(self).__name__}: name must be a str, got {name!r}")
        if not name:
            raise ValueAssertionError(f"{type(self).__name__}: name must be a non-empty str")
        self._instance_name = name

    @classmethod
    def get_instance(cls: type[T], name: str, **kwargs: Any) -> T:
        """The instance called ``name``; created as ``cls(name=name, **kwargs)`` (and made
        current) when there is none. ``kwargs`` for an existing instance are ignored, with a
        warning."""
        if not isinstance(name, str):
            raise TypeAssertionError(
                f"{cls.__name__}.get_instance: name must be a str, got {name!r}"
            )
        with _lock:
            instance = cls._instances.get(name)
            if instance is None:
                instance = cls(name=name, **kwargs)
                instance._register_instance()
            elif kwargs:
                warnings.warn(
                    f"{cls.__name__} {name!r} exists already; get_instance ignores the "
                    f"arguments {sorted(kwargs)}",
                    stacklevel=2,
                )
        return instance

    @classmethod
    def get_current_instance(cls: type[T]) -> T:
        """The current instance (the newest created); RuntimeError when there is none yet."""
        current = cls._current
        if current is None:
            raise RuntimeError(
                f"{cls.__name__}.get_current_instance(): no instance exists yet; "
                f"create one with {cls.__name__}.get_instance(name, ...) first"
            )
        return current

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Whether an instance called ``name`` exists."""
        return name in cls._instances

    @property
    def instance_name(self) -> str:
        """The name this instance was created under."""
        return self._instance_name

    def make_current(self) -> None:
        """Make this instance the current one of its class and managed bases, and the one
        :meth:`get_instance` finds under its name again: an instance created later under
        the same name (by a second Runner of the same experiment or visualizer name) had
        taken its place there. A Runner calls this when it starts to run."""
        for manager in type(self)._managers:
            manager._instances[self._instance_name] = self
            manager._current = self

    def _register_instance(self) -> None:
        """Store this instance under its name (replacing one of that name) and make it
        current; for subclasses that create instances other than through get_instance."""
        self.make_current()


ManagerMixin._managers = ()  # the mixin itself holds no instances
