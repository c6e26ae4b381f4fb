"""A warning for Lightning Callback methods on a hook, which the Runner never calls.

A Callback ported as a Hook often keeps ``on_train_epoch_end`` or ``on_exception``; the Runner
calls hooks at their hook points only, so the run goes on without that work, silently.
:func:`callback_methods_warning` names each such method, with the hook point that does its
work (docs/lightning.md, 'Callbacks'). ``state_dict`` / ``load_state_dict`` are not among
them: the Runner saves and restores them (see :mod:`runnerx.checkpoint.hook_states`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from functools import cache
from types import CodeType

from runnerx.hooks.hook import Hook

_NO_POINT_AFTER_ERROR = "a try/except around runner.train() (no hook point runs after an error)"
_SANITY_CHECK = "nothing: the sanity check (num_sanity_val_steps) calls no hooks"
#: Callback methods that count only in Lightning's form, ``setup(self, trainer, pl_module,
#: stage)``: a hook's own ``setup()`` helper is no Callback's
_LIGHTNING_FORM_ONLY = {"setup": "before_run", "teardown": "after_run"}
_LIGHTNING_PARAMETERS = {"trainer", "pl_module", "stage"}


@cache
def callback_places() -> dict[str, str]:
    """Callback method -> the hook point (or the place) that does its work in runnerx; the
    hook points shared with LightningModule's methods come from one table
    (:data:`runnerx.model.lightning_methods.LIGHTNING_HOOK_POINTS`)."""
    from runnerx.model.lightning_methods import LIGHTNING_HOOK_POINTS, STEP_HOOKS

    return {
        **LIGHTNING_HOOK_POINTS,
        **_LIGHTNING_FORM_ONLY,
        "on_exception": _NO_POINT_AFTER_ERROR,
        "on_sanity_check_start": _SANITY_CHECK,
        "on_sanity_check_end": _SANITY_CHECK,
        **dict.fromkeys(STEP_HOOKS, "an override of the model's train_step"),
    }


@cache  # once per hook class
def callback_methods_warning(kind: type) -> str | None:
    """The warning for the Callback methods the hook class ``kind`` defines and nothing calls
    (a method the class's own code calls, ``self.on_train_epoch_end(...)`` from
    ``after_train_epoch``, does its work), each with its runnerx place; None when there are
    none."""
    own = [klass for klass in kind.__mro__ if klass not in (Hook, object)]
    defined = {name: value for klass in reversed(own) for name, value in vars(klass).items()}
    called = {name for value in defined.values() for name in _names_used(value)}
    found = {
        name: place
        for name, place in callback_places().items()
        if callable(defined.get(name)) and name not in called and _lightning_form(name, defined)
    }
    if not found:
        return None
    places = "; ".join(f"{name} -> {place}" for name, place in found.items())
    return (
        f"{kind.__name__} defines Lightning Callback methods that the Runner never calls, so "
        f"their work is not done: {places}. Move that work there; a hook point takes the "
        "runner in place of the trainer and the module (docs/lightning.md, 'Callbacks')"
    )


def _lightning_form(name: str, defined: dict) -> bool:
    """Whether ``defined[name]`` is the Callback method: ``setup`` / ``teardown`` only when
    they take Lightning's arguments."""
    if name not in _LIGHTNING_FORM_ONLY:
        return True
    try:
        return bool(_LIGHTNING_PARAMETERS & set(inspect.signature(defined[name]).parameters))
    except (TypeError, ValueError):
        return False


def _names_used(value: object) -> Iterator[str]:
    """The names (attributes included) that a function of the class refers to."""
    code = getattr(getattr(value, "__func__", value), "__code__", None)
    if isinstance(code, CodeType):
        yield from _code_names(code)


def _code_names(code: CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:  # nested functions, lambdas, comprehensions
        if isinstance(constant, CodeType):
            yield from _code_names(constant)
