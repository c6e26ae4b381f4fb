"""The layout of a checkpoint saved with ``EMAHook`` (MMEngine's): ``state_dict`` holds the
averaged weights, ready to deploy, and ``ema_state_dict`` the training weights, as
``module.<name>`` next to the average's own entries (``steps``).

``load_from`` and ``tools/test.py`` take ``state_dict``: the averaged weights. A resume must
continue from the training weights: EMAHook swaps them back when it runs; without it,
:func:`resume_training_weights` does.
"""

from __future__ import annotations

from typing import Any

_PREFIX = "module."


def swap_ema_weights(checkpoint: dict) -> None:
    """Exchange ``ema_state_dict['module.<name>']`` and ``state_dict['<name>']``, entries only:
    turns the saved layout into the training one and back."""
    model_state, ema_state = checkpoint["state_dict"], checkpoint["ema_state_dict"]
    for key in ema_state:
        if not key.startswith(_PREFIX):
            continue  # the average's own entries, such as 'steps'
        name = key[len(_PREFIX) :]
        if name not in model_state:
            raise KeyError(
                f"EMA checkpoint: its state_dict has no {name!r}, which ema_state_dict holds "
                f"as {key!r}; the model and the average differ"
            )
        ema_state[key], model_state[name] = model_state[name], ema_state[key]


def resume_training_weights(runner: Any, checkpoint: dict, path: str, saved_weights: dict) -> None:
    """Before a resume loads ``checkpoint['state_dict']``: when the checkpoint was saved with
    EMAHook and no hook of this run has swapped the training weights back (they are still the
    tensors ``saved_weights``, taken from the file before ``after_load_checkpoint``), swap
    them here, so that training continues from the training weights rather than from the
    average; log it."""
    model_state, ema_state = checkpoint.get("state_dict"), checkpoint.get("ema_state_dict")
    if not isinstance(model_state, dict) or not isinstance(ema_state, dict):
        return
    if any(model_state.get(name) is not tensor for name, tensor in saved_weights.items()):
        return  # a hook (EMAHook) has put the training weights back in place
    if not any(key.startswith(_PREFIX) for key in ema_state):
        return
    swap_ema_weights(checkpoint)
    runner.logger.warning(
        f"resume: {path} was saved with EMAHook and this run has none: training continues "
        "from its training weights (ema_state_dict), and the average (its state_dict) is "
        f"not kept; load_from='{path}' (weights only) loads the averaged weights"
    )
