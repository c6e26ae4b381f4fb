"""Checks of config values shared by the optim package, and their messages."""

from __future__ import annotations

import inspect
from typing import Any

from runnerx.registry.errors import mark_wrapped
from runnerx.suggest import SENTENCE, did_you_mean

#: (a key given, a key taken instead): what to say of that mix-up, common when moving between
#: the SGD and Adam families of optimizers ({name}: the optimizer's)
_MIX_UPS = {
    ("momentum", "betas"): (
        "{name}'s momentum is the first value of betas: betas=(0.9, 0.999) is a momentum of "
        "0.9 (0.999 is the decay of the squared gradients' average)"
    ),
    ("betas", "momentum"): "{name}'s momentum is one number: momentum=0.9 (Adam's betas[0])",
    ("nesterov", "betas"): "Adam with Nesterov momentum is type='NAdam'",
}


def check_arguments(target: Any, keys: list[str], where: str, skip: int = 0) -> None:
    """Raise a TypeError naming the first key in ``keys`` that ``target`` does not take.

    ``skip`` leaves out that many leading parameters (what the builder fills in itself). A
    target with ``**kwargs`` (or without a signature) is not checked.
    """
    try:
        parameters = list(inspect.signature(target).parameters.values())[skip:]
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return
    accepted = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    name = getattr(target, "__name__", repr(target))
    for key in keys:
        if key not in accepted:
            hint = _mix_up(key, accepted, name) or did_you_mean(key, accepted, form=SENTENCE)
            raise mark_wrapped(  # it names its key: no "while building" in front of it
                TypeError(
                    f"{where} has {key!r}, which {name} does not take (it takes: "
                    f"{', '.join(accepted)}).{hint}"
                )
            )


def _mix_up(key: str, accepted: list[str], name: str) -> str:
    """`` <what to say>.`` when giving ``key`` where ``accepted`` is taken is a known
    mix-up of optimizer families (:data:`_MIX_UPS`), else ``""``."""
    for (given, instead), text in _MIX_UPS.items():
        if key == given and instead in accepted:
            return f" {text.format(name=name)}."
    return ""
