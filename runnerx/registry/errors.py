"""The registry's errors and the text its messages and tables are made of."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from runnerx.registry.default_scope import DefaultScope
from runnerx.registry.scopes import MMENGINE_SCOPE, import_failure
from runnerx.suggest import close_matches

if TYPE_CHECKING:
    from runnerx.registry.registry import Registry

# Set on an exception that already says where in the config it comes from (a build added its
# context, or its message names its config key), so outer builds pass it on unchanged.
WRAPPED_MARK = "_runnerx_build_wrapped"

_CUSTOM_IMPORTS_HINT = (
    "If it is defined in your own package, make sure that package is imported before the build "
    "(in a config: custom_imports=dict(imports=['my_pkg.models']))."
)


class RegistryKeyError(KeyError):
    """A KeyError raised by the registry; ``str(err)`` is the plain message, without quotes."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class NotRegisteredError(RegistryKeyError):
    """A type name that no searched registry knows (and that is not an importable path).

    Attributes: ``key`` (the name asked for), ``registries`` (where the search started) and
    ``path`` (the config key path of the dict being built, when known). One with a ``path``
    names its key, so no outer build adds its context to it.
    """

    def __init__(
        self, key: str, registries: list[Registry] | tuple = (), path: str | None = None
    ) -> None:
        self.key = key
        self.registries = list(registries)
        self.path = path
        message = not_registered_message(key, self.registries, path) if registries else key
        super().__init__(message)
        if path is not None:
            mark_wrapped(self)


def mark_wrapped(err: BaseException) -> BaseException:
    """Mark ``err`` as already saying where in the config it comes from, so that no outer
    build puts its ``while building ...`` in front; returns it. Builds mark the errors they
    add context to; a builder marks its own error whose message names the config key::

        raise mark_wrapped(TypeError(f"{cfg_key}.{key} is not a dataloader option"))
    """
    try:
        setattr(err, WRAPPED_MARK, True)
    except (AttributeError, TypeError):  # an exception type without __dict__
        pass
    return err


def is_wrapped(err: BaseException) -> bool:
    """Whether ``err`` already says where in the config it comes from (see mark_wrapped)."""
    return bool(getattr(err, WRAPPED_MARK, False))


def qualified_name(obj: Any) -> str:
    """``module.QualName`` of a class or function, for messages and tables."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return repr(obj)
    return f"{module}.{name}" if module else name


def describe(registry: Registry) -> str:
    """``the 'model' registry (scope 'runnerx')``: how messages name a registry."""
    return f"the '{registry.name}' registry (scope '{registry.scope}')"


def check_names(name: Any) -> list[str] | None:
    """Validate register_module's ``name``: None, a str or a list of str without dots."""
    if name is None:
        return None
    names = [name] if isinstance(name, str) else name
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise TypeError(f"name must be a str, a list of str or None, but got {name!r}")
    for each in names:
        if not each or "." in each:
            raise ValueError(
                f"cannot register under {each!r}: a name must be non-empty and have no dots "
                "(a dot separates a scope from a name, as in 'mypkg.ResNet')"
            )
    return list(names)


def registry_table(name: str, scope: str, entries: dict[str, Any], pending: list[str]) -> str:
    """A registry's repr: a header and a two-column table of names and objects."""
    rows = [(key, qualified_name(obj)) for key, obj in sorted(entries.items())]
    head = f"Registry(name={name!r}, scope={scope!r}, {len(rows)} entries"
    if pending:
        head += f"; not yet imported: {', '.join(pending)}"
    width = max([len("Name")] + [len(key) for key, _ in rows])
    lines = [head + ")", f"  {'Name':<{width}}  Object", f"  {'-' * width}  ------"]
    lines += [f"  {key:<{width}}  {obj}" for key, obj in rows]
    return "\n".join(lines)


def _quoted_alternatives(words: list[str]) -> str:
    return " or ".join(repr(word) for word in words)


def not_registered_message(key: str, registries: list[Registry], path: str | None) -> str:
    """Say which registries were searched for ``key`` and suggest close names."""

    where = "" if path is None else (" (cfg.type)" if path == "" else f" (cfg.{path}.type)")
    searched: list[Registry] = []
    suggestions: list[str] = []
    missing_scopes: list[tuple[Registry, str]] = []
    looked_up = key
    for registry in registries:
        chain, name, prefix = registry._resolve_chain(key)
        if not chain:
            missing_scopes.append((registry.root, name.split(".", 1)[0]))
            continue
        looked_up = name
        searched.extend(reg for reg in chain if reg not in searched)
        names = [entry for reg in chain for entry in reg._module_dict]
        for match in close_matches(name, names, n=3):
            if prefix + match not in suggestions:
                suggestions.append(prefix + match)

    if searched:
        first, rest = searched[0], searched[1:]
        message = f"{key!r}{where} is not registered in {describe(first)}"
        if rest:
            message += ", nor in " + ", ".join(
                f"'{reg.name}' (scope '{reg.scope}')" for reg in rest
            )
        message += "."
        if key.startswith(MMENGINE_SCOPE + "."):
            message += (
                f" ('{MMENGINE_SCOPE}.' names runnerx's root registries, so {key!r} was looked "
                f"up as {looked_up!r}; runnerx never builds MMEngine's own classes.)"
            )
    else:
        root, scope = missing_scopes[0]
        scopes = _scopes_under(root)
        message = (
            f"{key!r}{where} is not registered: it starts with scope {scope!r}, but no registry "
            f"in the tree of {describe(root)} has that scope (scopes there: "
            f"{', '.join(repr(s) for s in scopes)})"
        )
        note = _import_failure_note(scope)
        message += f"; {note}" if note else ""
        if scope != MMENGINE_SCOPE:  # never imported: see Registry.get
            from runnerx.registry.import_path import import_object

            message += f", and it is not an importable Python path ({import_object(key)[1]})"
        message += "."
        close_scopes = close_matches(scope, scopes, n=3)
        if close_scopes:
            message += f" Did you mean scope {_quoted_alternatives(close_scopes)}?"
            return message
    message += _default_scope_note(registries)

    elsewhere = _scopes_registering(looked_up, searched)
    if elsewhere:
        return message + (
            f" {looked_up!r} is registered in scope {_quoted_alternatives(elsewhere)} of this "
            f"tree, which a plain name does not reach: write type="
            f"{_quoted_alternatives([f'{scope}.{looked_up}' for scope in elsewhere])}, or set "
            f"default_scope={_quoted_alternatives(elsewhere)} in the config."
        )
    if suggestions:
        return message + f" Did you mean {_quoted_alternatives(suggestions)}?"
    return message + " " + _CUSTOM_IMPORTS_HINT


def _import_failure_note(scope: str) -> str:
    why = import_failure(scope)
    if why is None:
        return ""
    return f"runnerx tried to import '{scope}.registry', as MMEngine does, and got: {why}"


def _default_scope_note(registries: list[Registry]) -> str:
    """A word on the default scope when its package's registry module failed to import."""
    current = DefaultScope.get_current_instance()
    scope = None if current is None else current.scope_name
    if scope is None or any(reg.root._find_scope(scope) is not None for reg in registries):
        return ""
    note = _import_failure_note(scope)
    if not note:
        return ""
    return f" The default scope is {scope!r}, but no registry of this tree has that scope: {note}."


def _scopes_registering(name: str, searched: list[Registry]) -> list[str]:
    """Scopes of the registries in the searched trees, other than the searched ones, that
    already have ``name`` (nothing is imported to find out)."""
    roots = {id(reg.root): reg.root for reg in searched}.values()
    found: list[str] = []
    for registry in (reg for root in roots for reg in _registries_under(root)):
        if registry not in searched and name in registry._module_dict:
            found.append(registry.scope)
    return list(dict.fromkeys(found))


def _registries_under(root: Registry) -> list[Registry]:
    """``root`` and its descendants, depth first."""
    registries: list[Registry] = []
    stack = [root]
    while stack:
        registry = stack.pop()
        registries.append(registry)
        stack.extend(reversed(list(registry.children.values())))
    return registries


def _scopes_under(root: Registry) -> list[str]:
    return list(dict.fromkeys(registry.scope for registry in _registries_under(root)))
