"""build_from_cfg: turn ``dict(type=..., **kwargs)`` into an object, with errors that say where."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Mapping
from typing import Any

from runnerx.registry.default_scope import DefaultScope
from runnerx.registry.errors import (
    NotRegisteredError,
    RegistryKeyError,
    is_wrapped,
    mark_wrapped,
)
from runnerx.registry.registry import Registry
from runnerx.suggest import did_you_mean
from runnerx.utils.manager import ManagerMixin

#: DEBUG lines say what each config built and from where (``log_level='DEBUG'``)
_logger = logging.getLogger(__name__)


def build_from_cfg(
    cfg: Mapping[str, Any], registry: Registry, default_args: Mapping[str, Any] | None = None
) -> Any:
    """Build the object ``cfg`` describes: look up ``cfg['type']`` and call it with the rest.

    ``type`` is a registered name (``'ResNet'``, ``'mypkg.ResNet'``), a dotted import path
    (``'torch.optim.SGD'``) or a class or function itself. ``default_args`` fill in keys the
    config leaves out; ``cfg`` itself is not changed. ``_scope_`` switches the default scope
    while this object (and whatever it builds) is built::

        build_from_cfg(dict(type='SGD', lr=0.1), OPTIMIZERS, default_args=dict(params=params))

    An error while constructing gets the config key path and the type: in front of its
    message, raised again as the same type and chained, when the error holds nothing but one
    message; else as a note on the original exception (Python 3.11+; a chained RuntimeError on
    3.10), so ``except MyError`` and attributes like ``errno`` still work.

    An instance of a :class:`~runnerx.utils.ManagerMixin` class (a Visualizer, your own
    managed class) is made current, as in MMEngine, so ``Cls.get_current_instance()`` returns
    what was just built. Unlike MMEngine, which returns the instance that already has the
    ``name``, a build always makes a new one (it replaces the old one under that name): a
    second run's visualizer never writes into the first run's folder.
    """
    cfg = _as_mapping(cfg)
    if not isinstance(cfg, Mapping):
        raise TypeError(
            "cfg must be a dict (or ConfigDict) with a 'type' key, but got "
            f"{type(cfg).__name__}: {_short(cfg)}"
        )
    default_args = _as_mapping(default_args)
    if default_args is not None and not isinstance(default_args, Mapping):
        raise TypeError(f"default_args must be a dict or None, but got {type(default_args)}")
    if not isinstance(registry, Registry):
        raise TypeError(f"registry must be a runnerx Registry, but got {type(registry)}")
    if "type" not in cfg and (default_args is None or "type" not in default_args):
        raise mark_wrapped(RegistryKeyError(_missing_type_message(cfg)))

    args = dict(cfg)
    if default_args is not None:
        for key, value in default_args.items():
            args.setdefault(key, value)
    with DefaultScope.overwrite_default_scope(args.pop("_scope_", None)):
        type_value = args.pop("type")
        obj_type = _resolve_type(type_value, _registries_to_search(registry), cfg)
        try:
            built = obj_type(**args)
        except Exception as err:
            if is_wrapped(err):
                raise
            wrapped = _with_context(err, type_value, obj_type, cfg)
            if wrapped is err:  # the original, with a note: keep its traceback
                raise
            raise wrapped from err
        if isinstance(built, ManagerMixin) and hasattr(built, "_instance_name"):
            built._register_instance()
    if _logger.isEnabledFor(logging.DEBUG):
        where = f"{getattr(obj_type, '__module__', '?')}.{getattr(obj_type, '__qualname__', '?')}"
        _logger.debug(
            f"built type={type_value!r} from the {registry.name!r} registry "
            f"(scope {registry.scope!r}): {where}"
        )
    return built


def _as_mapping(cfg: Any) -> Any:
    """A whole ``Config`` (iterable, indexable, with ``to_dict``) is read as its top-level dict,
    as MMEngine's build_from_cfg accepts a Config (as ``cfg`` or ``default_args``); anything
    else is returned unchanged."""
    kind = type(cfg)
    if isinstance(cfg, Mapping) or not all(
        hasattr(kind, attr) for attr in ("to_dict", "__getitem__", "__iter__")
    ):
        return cfg
    return {key: cfg[key] for key in cfg}


def _registries_to_search(registry: Registry) -> list[Registry]:
    """The default scope's registry first (when there is one and it differs), then ``registry``."""
    current = DefaultScope.get_current_instance()
    if current is None or current.scope_name == registry.scope:
        return [registry]
    scoped = registry.registry_for_scope(current.scope_name)
    if scoped is None:  # no registry of that scope in this tree: normal for most registries
        return [registry]
    return [scoped] if scoped is registry else [scoped, registry]


def lookup_type(registry: Registry, name: str) -> tuple[Any, list[Registry]]:
    """What ``registry.build`` finds for the type ``name`` (None when nothing), and the
    registries it searches: the default scope's first, then ``registry``; for a check made
    before the build, which can then name the key in its error."""
    registries = _registries_to_search(registry)
    return _first_found(name, registries), registries


def _first_found(name: str, registries: list[Registry]) -> Any:
    for registry in registries:
        obj = registry.get(name)
        if obj is not None:
            return obj
    return None


def _resolve_type(type_value: Any, registries: list[Registry], cfg: Mapping) -> Any:
    if isinstance(type_value, str):
        obj = _first_found(type_value, registries)
        if obj is not None:
            return obj
        raise mark_wrapped(NotRegisteredError(type_value, registries, _key_path(cfg)))
    if callable(type_value):
        return type_value
    where = _where(cfg)
    raise mark_wrapped(
        TypeError(
            f"{where} has type={type_value!r} ({type(type_value).__name__}); type must be a "
            "registered name, a dotted import path, a class or a function"
        )
    )


def _with_context(err: Exception, type_value: Any, obj_type: Any, cfg: Mapping) -> Exception:
    """``err`` with the build context. An error that holds just one message is raised again as
    the same type with the context in front of its message. Any other is ``err`` itself with
    the context as a note (Python 3.11+), so its type, args and attributes stay; on 3.10 it is
    rebuilt where its type takes one string, else it becomes a RuntimeError."""
    shown = repr(type_value) if isinstance(type_value, str) else _name_of(type_value)
    module = getattr(obj_type, "__module__", None)
    origin = f"type={shown}" + (f" from {module}" if module else "")
    path = _key_path(cfg)
    head = (
        f"while building {origin}" if path is None else f"while building {_where(cfg)} ({origin})"
    )
    hint = did_you_mean_argument(err, obj_type)
    if hasattr(err, "add_note") and not _only_a_message(err):
        err.add_note(head + hint)
        mark_wrapped(err)
        return err
    detail = (str(err) or type(err).__name__) + hint
    message = f"{head}: {detail}"
    wrapped: Exception | None
    try:
        wrapped = type(err)(message)
    except Exception:
        wrapped = None
    # Keep the type only when the new error really shows the message (KeyError quotes it).
    if wrapped is not None and message not in str(wrapped) and wrapped.args != (message,):
        wrapped = None
    if wrapped is None:
        wrapped = RuntimeError(f"{head}: {type(err).__name__}: {detail}")
    mark_wrapped(wrapped)
    return wrapped


def _only_a_message(err: Exception) -> bool:
    """Whether ``err`` holds nothing a rebuild from one string would lose: at most one str
    argument and no attributes of its own (``errno`` is an argument; notes are attributes)."""
    return len(err.args) <= 1 and all(isinstance(arg, str) for arg in err.args) and not vars(err)


def did_you_mean_argument(err: Exception, obj_type: Any) -> str:
    """For an unexpected keyword argument, the closest argument the type (or a class it
    inherits from) takes: ``milestone`` -> ``; did you mean 'milestones'?``."""
    found = re.search(r"unexpected keyword argument '(\w+)'", str(err))
    if not isinstance(err, TypeError) or found is None:
        return ""
    names: set[str] = set()
    for kind in getattr(obj_type, "__mro__", (obj_type,)):
        try:
            names.update(inspect.signature(kind).parameters)
        except (TypeError, ValueError):  # builtins without a signature
            continue
    # the name itself can be a parameter of a base class the type does not pass it on to
    word = found.group(1)
    return did_you_mean(word, sorted(names - {"self", "args", "kwargs", word}))


def _key_path(cfg: Any) -> str | None:
    # Imported here: the config package may import the registry, never the other way round.
    from runnerx.config.config_dict import config_key_path

    return config_key_path(cfg)


def _where(cfg: Any) -> str:
    path = _key_path(cfg)
    if path is None:
        return "the config"
    return f"cfg.{path}" if path else "cfg"


def _missing_type_message(cfg: Mapping) -> str:
    keys = ", ".join(str(key) for key in cfg) or "none"
    return (
        f"{_where(cfg)} has no 'type' key (its keys: {keys}); 'type' names what to build: a "
        "registered name, a dotted import path like 'torch.optim.SGD', or a class or function. "
        "default_args=dict(type=...) can give one."
    )


def _name_of(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def _short(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
