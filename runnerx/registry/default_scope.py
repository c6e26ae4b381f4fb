"""DefaultScope: the process-wide scope in which builds look up type names first.

A config's ``default_scope='mypkg'`` makes ``MODELS.build(...)`` search the ``mypkg`` child of
the root registry before the registry it was called on, so a package's configs can name its
components without a ``'mypkg.'`` prefix.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from runnerx.utils.manager import ManagerMixin


class DefaultScope(ManagerMixin):
    """A named default scope; the most recently created one is current.

    The API is MMEngine's::

        DefaultScope.get_instance('my-run', scope_name='mypkg')  # create; now current
        DefaultScope.get_current_instance().scope_name          # 'mypkg'
        with DefaultScope.overwrite_default_scope('other'):     # temporarily 'other'
            ...
    """

    def __init__(self, name: str, scope_name: str) -> None:
        if not isinstance(scope_name, str) or not scope_name:
            raise TypeError(f"scope_name must be a non-empty str, but got {scope_name!r}")
        super().__init__(name)
        self._scope_name = scope_name

    @property
    def scope_name(self) -> str:
        """The scope, e.g. ``'mypkg'``."""
        return self._scope_name

    def __repr__(self) -> str:
        return f"DefaultScope(name={self._instance_name!r}, scope_name={self._scope_name!r})"

    @classmethod
    def get_instance(cls, name: str, scope_name: str | None = None) -> DefaultScope:
        """Return the instance called ``name``, creating it (and making it current) if new.

        As in MMEngine, asking for an existing instance does not change the current one, and a
        different ``scope_name`` for an existing instance is ignored with a warning.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, but got {name!r}")
        existing = cls._instances.get(name)
        if existing is not None:
            if scope_name is not None and scope_name != existing.scope_name:
                warnings.warn(
                    f"DefaultScope {name!r} already exists with scope {existing.scope_name!r}; "
                    f"scope_name={scope_name!r} is ignored",
                    stacklevel=2,
                )
            return existing
        if scope_name is None:
            raise TypeError(f"DefaultScope {name!r} does not exist yet: pass scope_name=")
        return super().get_instance(name, scope_name=scope_name)

    @classmethod
    def get_current_instance(cls) -> DefaultScope | None:
        """The current default scope, or None when none has been set."""
        return cls._current

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Whether an instance called ``name`` exists."""
        return name in cls._instances

    @classmethod
    @contextmanager
    def overwrite_default_scope(cls, scope_name: str | None) -> Iterator[None]:
        """Make ``scope_name`` the default scope inside the block (None: leave it as it is)."""
        if scope_name is None:
            yield
            return
        previous = cls._current
        cls._current = cls(f"overwrite-{scope_name}", scope_name)
        try:
            yield
        finally:
            cls._current = previous


_counter = itertools.count()


def init_default_scope(scope: str) -> DefaultScope:
    """Make ``scope`` the current default scope (a no-op when it already is) and return it.

    This is what a config's ``default_scope = 'mypkg'`` does when the Runner starts.
    """
    current = DefaultScope.get_current_instance()
    if current is not None and current.scope_name == scope:
        return current
    name = scope
    while DefaultScope.check_instance_created(name):
        name = f"{scope}-{next(_counter)}"
    return DefaultScope.get_instance(name, scope_name=scope)
