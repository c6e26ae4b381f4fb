"""Registry: a named table from type names to classes and functions, arranged in a scope tree."""

from __future__ import annotations

import contextlib
import importlib
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from runnerx.registry.errors import (
    RegistryKeyError,
    check_names,
    describe,
    qualified_name,
    registry_table,
)
from runnerx.registry.scopes import MMENGINE_SCOPE, alias_of, import_scope_registry
from runnerx.utils.errors import TypeAssertionError, ValueAssertionError


class Registry:
    """Maps names to classes and functions so that configs can name what to build.

    ``dict(type='ResNet', depth=50)`` is built by looking ``'ResNet'`` up here and calling the
    class with the other keys. Registries form a tree: a package makes a child of a root
    registry under its own scope, sees its ancestors' entries, and is reachable from anywhere
    in the tree as ``'mypkg.Name'``::

        MODELS = Registry('model', parent=ROOT_MODELS, scope='mypkg', locations=['mypkg.models'])

        @MODELS.register_module()
        class ResNet: ...

        MODELS.build(dict(type='ResNet', depth=50))

    ``scope`` defaults to the top-level package of the module that creates the registry.
    ``locations`` are modules imported the first time the registry is looked up, so that the
    entries they register are there without importing them up front.
    """

    def __init__(
        self,
        name: str,
        build_func: Callable[..., Any] | None = None,
        parent: Registry | None = None,
        scope: str | None = None,
        locations: Iterable[str] = (),
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"Registry name must be a non-empty str, but got {name!r}")
        if parent is not None and not isinstance(parent, Registry):
            raise TypeAssertionError(
                f"parent must be a Registry or None, but got {type(parent).__name__}"
            )
        if build_func is not None and not callable(build_func):
            raise TypeError(f"build_func must be callable, but got {type(build_func).__name__}")
        if scope is None:
            scope = self._infer_scope()
        elif not isinstance(scope, str) or not scope or "." in scope:
            raise ValueAssertionError(
                f"scope must be a non-empty str without dots, but got {scope!r}"
            )
        if parent is not None:
            _check_scope_free(parent, scope, "create this one with another scope=")
        self._name = name
        self._scope = scope
        self._parent = parent
        self._children: dict[str, Registry] = {}
        self._module_dict: dict[str, Any] = {}
        self._replaceable: set[str] = set()  # names whose entry a later registration may take
        self._locations = [locations] if isinstance(locations, str) else list(locations)
        self._imported = not self._locations
        self._importing = False
        if build_func is None and parent is not None:
            build_func = parent.build_func
        elif build_func is None:
            from runnerx.registry.build import build_from_cfg

            build_func = build_from_cfg
        self.build_func = build_func
        if parent is not None:
            parent._children[scope] = self

    def _infer_scope(self) -> str:
        # The caller is the first frame that is not this registry's own __init__ (a subclass's
        # __init__ calling super().__init__ is skipped too).
        frame = sys._getframe(1)
        while frame is not None and frame.f_locals.get("self") is self:
            frame = frame.f_back
        return _package_of(frame)

    @staticmethod
    def infer_scope() -> str:
        """MMEngine's: the top-level package of the module that called the function calling
        this one, so a Registry subclass's own ``__init__`` gets the package creating it::

            self._scope = self.infer_scope() if scope is None else scope

        ``'__main__'`` for a script (MMEngine gives ``'mmengine'`` where it cannot tell).
        """
        try:
            frame = sys._getframe(2)
        except ValueError:  # called from the outermost frame
            frame = None
        return _package_of(frame)

    @property
    def name(self) -> str:
        """The registry's name, e.g. ``'model'``."""
        return self._name

    @property
    def scope(self) -> str:
        """The scope (usually a package name) this registry belongs to."""
        return self._scope

    @property
    def parent(self) -> Registry | None:
        """The registry this one falls back to for plain names, or None for a root."""
        return self._parent

    @parent.setter
    def parent(self, parent: Registry | None) -> None:
        # MMEngine keeps parent as a plain attribute, and downstream code re-parents this way
        # (``MMDET3D_MODELS.parent = MMDET_MODELS``); the children maps follow here.
        if parent is not None and not isinstance(parent, Registry):
            raise TypeError(
                f"{describe(self)}: parent must be a Registry or None, but got "
                f"{type(parent).__name__}"
            )
        if parent is self._parent:
            return
        if parent is not None:
            ancestor: Registry | None = parent
            while ancestor is not None and ancestor is not self:
                ancestor = ancestor._parent
            if ancestor is self:
                raise ValueError(
                    f"cannot make {describe(parent)} the parent of {describe(self)}: it is that "
                    "registry or one of its descendants, so the tree would have a cycle"
                )
            _check_scope_free(parent, self._scope, "re-parent that one elsewhere first")
        old = self._parent
        if old is not None and old._children.get(self._scope) is self:
            del old._children[self._scope]
        if parent is not None:
            parent._children[self._scope] = self
        self._parent = parent

    @property
    def children(self) -> dict[str, Registry]:
        """Child registries by scope."""
        return self._children

    @property
    def root(self) -> Registry:
        """The registry at the top of this one's tree."""
        registry = self
        while registry._parent is not None:
            registry = registry._parent
        return registry

    @property
    def module_dict(self) -> dict[str, Any]:
        """This registry's own entries (not its ancestors'), name -> class or function."""
        self.import_from_location()
        return self._module_dict

    def register_module(
        self,
        name: str | list[str] | tuple[str, ...] | None = None,
        force: bool = False,
        module: Any = None,
        *,
        replaceable: bool = False,
    ) -> Any:
        """Register a class, a function or any other callable, as a decorator or a plain call.

        ``name`` defaults to the object's ``__name__``; a list registers aliases. A callable
        without a ``__name__`` (a ``functools.partial``, an instance with ``__call__``) needs
        ``name=``. A name that is taken is an error unless ``force=True``, which replaces the
        entry::

            @MODELS.register_module()                  # as 'ResNet'
            @MODELS.register_module(name=['R', 'RN'])  # under two names
            class ResNet: ...

            MODELS.register_module(name='make_net', module=make_net)
            MODELS.register_module(name='ResNet18', module=functools.partial(ResNet, depth=18))

        ``replaceable=True`` registers a default that yields: a later registration of the same
        name takes the name with a warning instead of failing, and a name already taken is
        left to its holder. runnerx's own extras that MMEngine does not have (``'Accuracy'``
        in ``METRICS``, the example datasets and models, ...) are registered so, so that a
        user's ``@METRICS.register_module() class Accuracy`` works as it does in MMEngine.
        """
        if not isinstance(force, bool):
            raise TypeError(f"force must be a bool, but got {force!r}")
        names = check_names(name)
        if module is not None:
            self._register(module, names, force, replaceable)
            return module

        def register(obj: Any) -> Any:
            self._register(obj, names, force, replaceable)
            return obj

        return register

    def _register(
        self, module: Any, names: list[str] | None, force: bool, replaceable: bool = False
    ) -> None:
        if not callable(module):
            raise TypeError(
                f"{describe(self)} registers classes, functions and other callables, but got "
                f"{type(module).__name__}: {module!r}"
            )
        if names is None:
            if not isinstance(getattr(module, "__name__", None), str):
                raise TypeError(
                    f"{module!r} has no __name__ to register it under in {describe(self)}: "
                    "pass register_module(name=..., module=...)"
                )
            names = [module.__name__]
        taken = [name for name in names if self._module_dict.get(name) not in (None, module)]
        if replaceable and not force:  # a yielding default: the names held already stay so
            names = [name for name in names if name not in taken]
        elif not force:
            for name in taken:
                existing = self._module_dict[name]
                if name not in self._replaceable:
                    raise RegistryKeyError(
                        f"{name!r} is already registered in {describe(self)} by "
                        f"{qualified_name(existing)}, so {qualified_name(module)} cannot take "
                        "that name. Pass force=True to register_module to replace it, or "
                        "register it under another name."
                    )
                warnings.warn(
                    f"{qualified_name(module)} takes the name {name!r} in {describe(self)} from "
                    f"the built-in {qualified_name(existing)}; register it under another name "
                    "to keep both",
                    stacklevel=3,
                )
        for name in names:
            self._module_dict[name] = module
            if replaceable:
                self._replaceable.add(name)
            else:
                self._replaceable.discard(name)

    def get(self, key: str) -> Any:
        """The class or function registered as ``key``, or None.

        A plain name is searched here, then in the parent, grandparent, ... A scoped name
        ``'scope.Name'`` is searched in the registry of that scope in this tree (nested scopes
        ``'a.b.Name'`` work; see :meth:`registry_for_scope`). Failing that, a dotted key is
        imported as a Python path, so ``'torch.optim.SGD'`` names that class; but never one
        under MMEngine's scope: ``'mmengine.hooks.CheckpointHook'`` is runnerx's entry or None.
        """
        if not isinstance(key, str):
            raise TypeError(f"a registry key must be a str, but got {type(key).__name__}: {key!r}")
        obj = self._lookup(key)
        if obj is None and "." in key and self.split_scope_key(key)[0] != MMENGINE_SCOPE:
            from runnerx.registry.import_path import import_object

            obj, _ = import_object(key)
        return obj

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        return len(self.module_dict)

    def __bool__(self) -> bool:
        # A registry is an object to use, not a container: without this, ``if registry:``
        # would go through __len__ and import the locations (MMEngine's is False while empty).
        return True

    def registry_for_scope(self, scope: str) -> Registry | None:
        """The registry with ``scope``: this one, a descendant, or any in the tree; or None.

        A scope not in the tree gets ``<scope>.registry`` imported once, as in MMEngine, and
        ``'mmengine'`` means runnerx's root scope (see :mod:`runnerx.registry.scopes`).
        """
        found = self._in_tree(scope)
        if found is None and alias_of(scope) is not None:
            return self._in_tree(alias_of(scope))
        if found is None and import_scope_registry(scope):
            found = self._in_tree(scope)
        return found

    @contextlib.contextmanager
    def switch_scope_and_registry(self, scope: str | None) -> Iterator[Registry]:
        """MMEngine's: make ``scope`` the default scope inside the block and give the
        registry of the (new) default scope in this registry's tree, ``<scope>.registry``
        imported if needed; this registry itself when the tree has none::

            with MODELS.switch_scope_and_registry('mmdet') as registry:
                model = registry.build(cfg.model)
        """
        from runnerx.registry.default_scope import DefaultScope

        with DefaultScope.overwrite_default_scope(scope):
            current = DefaultScope.get_current_instance()
            found = None if current is None else self.registry_for_scope(current.scope_name)
            yield self if found is None else found

    def _in_tree(self, scope: str) -> Registry | None:
        return self._find_scope(scope) or self.root._find_scope(scope)

    @staticmethod
    def split_scope_key(key: str) -> tuple[str | None, str]:
        """Split ``'scope.Name'`` into ``('scope', 'Name')``; a plain name gives ``(None, key)``."""
        scope, dot, rest = key.partition(".")
        return (scope, rest) if dot else (None, key)

    def _find_scope(self, scope: str) -> Registry | None:
        if self._scope == scope:
            return self
        found = (child._find_scope(scope) for child in self._children.values())
        return next((registry for registry in found if registry is not None), None)

    def _resolve_chain(self, key: str) -> tuple[list[Registry], str, str]:
        """Registries a lookup of ``key`` searches (in order), the plain name it looks for and
        the scope prefix it consumed. The list is empty when a scope in the key is unknown."""
        registry, name, prefix = self, key, ""
        while "." in name:
            scope, rest = name.split(".", 1)
            target = registry.registry_for_scope(scope)
            if target is None:
                return [], name, prefix
            if target.scope != scope:  # an alias ('mmengine'): the rest may be a module path
                rest = rest.rsplit(".", 1)[-1]
            registry, name, prefix = target, rest, f"{prefix}{scope}."
        chain = []
        while registry is not None:
            chain.append(registry)
            registry = registry._parent
        return chain, name, prefix

    def _lookup(self, key: str) -> Any:
        chain, name, _ = self._resolve_chain(key)
        for registry in chain:
            registry.import_from_location()
            obj = registry._module_dict.get(name)
            if obj is not None:
                return obj
        return None

    def import_from_location(self) -> None:
        """Import this registry's ``locations`` now, once (MMEngine's name). Lookups do it on
        their own, so this is needed only to fill :attr:`module_dict` ahead of time; a location
        that fails raises an ImportError naming it, and the next call tries again."""
        # _importing makes a lookup made while a location is being imported (for example by
        # the location itself) see the entries registered so far instead of recursing.
        if self._imported or self._importing:
            return
        self._importing = True
        try:
            for location in self._locations:
                try:
                    importlib.import_module(location)
                except Exception as err:
                    raise ImportError(
                        f"{describe(self)} could not import {location!r}, a module "
                        f"that registers its entries: {type(err).__name__}: {err}",
                        name=location,
                    ) from err
            self._imported = True
        finally:
            self._importing = False

    def build(self, cfg: Any, *args: Any, **kwargs: Any) -> Any:
        """Build an object from ``cfg`` with this registry's ``build_func``.

        ``MODELS.build(dict(type='ResNet', depth=50))``; a second argument (positional or
        ``default_args=``) gives defaults for keys the config leaves out.
        """
        # build_func's second parameter is ``registry``: pass default_args by keyword.
        if len(args) > 1 or (args and "default_args" in kwargs):
            raise TypeError("Registry.build takes cfg and at most one more argument, default_args")
        if args:
            kwargs["default_args"] = args[0]
        return self.build_func(cfg, **kwargs, registry=self)

    def __repr__(self) -> str:
        pending = [] if self._imported else self._locations
        return registry_table(self._name, self._scope, self._module_dict, pending)


def _package_of(frame: Any) -> str:
    """The top-level package of the module a frame runs in; ``'__main__'`` when unknown."""
    module = frame.f_globals.get("__name__") if frame is not None else None
    return (module or "__main__").split(".", 1)[0]


def _check_scope_free(parent: Registry, scope: str, fix: str) -> None:
    """Refuse a second child with ``scope`` under ``parent``; ``fix`` says what to do instead."""
    taken = parent.children.get(scope)
    if taken is not None:
        raise ValueAssertionError(
            f"{describe(parent)} already has a child with scope {scope!r} "
            f"(the '{taken.name}' registry); {fix}"
        )
