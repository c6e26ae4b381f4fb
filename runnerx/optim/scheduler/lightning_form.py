"""Lightning's scheduler forms in ``param_scheduler``, recognised and rewritten in the error.

Lightning's ``configure_optimizers`` returns a scheduler as
``{'scheduler': ..., 'interval': 'step', 'frequency': 1, 'monitor': 'val_loss'}``; read as a
``param_scheduler`` dict without ``type``, its keys would be optimizer names. Here the
scheduler config is the entry itself: ``interval='step'`` is ``by_epoch=False``, ``monitor``
belongs to ``ReduceOnPlateauLR`` (a validation metric), and ``frequency`` has no key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: the keys of Lightning's scheduler dict that give it away
LIGHTNING_KEYS = ("scheduler", "interval", "frequency", "monitor")
#: torch schedulers whose runnerx counterpart has another name
TORCH_COUNTERPARTS = {
    "ReduceLROnPlateau": "ReduceOnPlateauLR",
    "PolynomialLR": "PolyLR",
    "CosineAnnealingWarmRestarts": "CosineRestartLR",
}
_PLATEAU = "ReduceOnPlateauLR"
_KEY_NOTES = {
    "interval": "interval='step' is by_epoch=False (begin, end, step_size and milestones then "
    "count iterations), interval='epoch' is by_epoch=True (the default)",
    "monitor": f"monitor belongs to {_PLATEAU}(monitor=...), where it names a validation "
    "metric (a key of the val_evaluator's results, e.g. 'loss' or 'accuracy/top1'): it acts "
    "after each validation",
    "frequency": "frequency has no key here: multiply step_size, milestones, begin and end by "
    f"it, or for {_PLATEAU} validate every that many epochs (train_cfg.val_interval)",
}


def is_lightning_form(cfg: Mapping, optimizer_names: Any = ()) -> bool:
    """Whether ``cfg``, a ``param_scheduler`` dict without ``type``, is Lightning's scheduler
    dict rather than schedulers keyed by the names in ``optimizer_names``."""
    return any(key in LIGHTNING_KEYS and key not in optimizer_names for key in cfg)


def lightning_form_error(where: str, cfg: Mapping, whole: bool = True) -> TypeError:
    """The error for Lightning's scheduler dict ``cfg`` at ``where``; ``whole=False`` when
    ``cfg`` holds only the key found (a check that sees one value at a time)."""
    if whole:  # frequency=1 is Lightning's default: nothing to carry over
        keys = [key for key in _KEY_NOTES if key in cfg and cfg[key] != 1]
    else:
        keys = list(_KEY_NOTES)
    found = ", ".join(map(repr, cfg))
    return TypeError(
        f"{where} is Lightning's scheduler dict (with {found}), as configure_optimizers "
        "returns it; runnerx would read its keys as optimizer names. param_scheduler is the "
        "scheduler config itself, or a list of them: here "
        f"param_scheduler={_rewritten(cfg)}. " + "; ".join(_KEY_NOTES[key] for key in keys)
    )


def lightning_argument_note(err: Exception) -> str:
    """For a scheduler's build error over one of Lightning's keys given as an argument
    (``frequency=2``: unexpected keyword argument), what that key is here; else ''."""
    found = re.search(r"unexpected keyword argument '(\w+)'", str(err))
    key = found.group(1) if isinstance(err, TypeError) and found else None
    if key not in _KEY_NOTES:
        return ""
    return (
        f"; {key} is a key of Lightning's scheduler dict, not a scheduler argument: "
        f"{_KEY_NOTES[key]}"
    )


def counterpart(torch_name: str) -> str | None:
    """runnerx's name for the torch scheduler ``torch_name`` where it differs, else None."""
    return TORCH_COUNTERPARTS.get(torch_name)


def _rewritten(cfg: Mapping) -> str:
    """``cfg`` as a runnerx scheduler config, as source text."""
    scheduler = cfg.get("scheduler")
    if isinstance(scheduler, Mapping):
        args, more = dict(scheduler), ""
    elif scheduler is not None:  # a torch scheduler object
        name = type(scheduler).__name__
        args, more = {"type": counterpart(name) or name}, ", ..."
    else:
        args, more = {"type": "<scheduler>"}, ", ..."
    if "monitor" in cfg or args.get("type") in ("ReduceLROnPlateau", _PLATEAU):
        args["type"] = _PLATEAU
        args.setdefault("monitor", "<validation metric>")
    elif cfg.get("interval") == "step":
        args["by_epoch"] = False
    shown = ", ".join(f"{key}={value!r}" for key, value in args.items())
    return f"dict({shown}{more})"
