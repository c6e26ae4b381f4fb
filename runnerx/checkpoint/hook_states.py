"""The state of hooks that keep it as a Lightning Callback does, with ``state_dict()`` and
``load_state_dict(state)``: saved in every checkpoint under ``checkpoint['hook_states']``
(an entry MMEngine ignores) and taken back on resume, not by ``load_from`` (as Lightning
restores callbacks on ``fit(ckpt_path=...)`` only)::

    class Counter(Hook):
        def __init__(self):
            self.n = 0

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            self.n += 1

        def state_dict(self):
            return {'n': self.n}

        def load_state_dict(self, state):
            self.n = state['n']

An entry is keyed by the hook's ``state_key`` when it has one (Lightning's name), else by its
class name; a second hook of one class gets ``'Counter#2'``, in the order the hooks run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: the checkpoint entry that holds the hooks' states, by state key
CHECKPOINT_KEY = "hook_states"


def stateful_hooks(hooks: Iterable[Any]) -> dict[str, Any]:
    """The hooks with both ``state_dict`` and ``load_state_dict``, by state key."""
    keyed: dict[str, Any] = {}
    for hook in hooks:
        if not (
            callable(getattr(hook, "state_dict", None))
            and callable(getattr(hook, "load_state_dict", None))
        ):
            continue
        own_key = getattr(hook, "state_key", None)
        key = own_key if isinstance(own_key, str) else type(hook).__qualname__
        number, unique = 1, key
        while unique in keyed:
            number += 1
            unique = f"{key}#{number}"
        keyed[unique] = hook
    return keyed


def hook_states(hooks: Iterable[Any]) -> dict[str, Any]:
    """Each stateful hook's ``state_dict()``, by state key (what a checkpoint saves)."""
    return {key: hook.state_dict() for key, hook in stateful_hooks(hooks).items()}


def restore_hook_states(runner: Any, checkpoint: dict, path: str) -> None:
    """On resume, hand each stateful hook its saved state; warn once naming the saved states
    no hook of this run takes. A checkpoint without the entry (MMEngine's, an older
    runnerx's) leaves every hook as it is."""
    saved = checkpoint.get(CHECKPOINT_KEY)
    if not isinstance(saved, dict):
        return
    hooks = stateful_hooks(runner.hooks)
    for key, hook in hooks.items():
        if key in saved:
            hook.load_state_dict(saved[key])
    left = [key for key in saved if key not in hooks]
    if left:
        runner.logger.warning(
            f"resume: {path} holds the state of hook(s) this run does not have "
            f"({', '.join(left)}), so it is not restored; add those hooks to custom_hooks to "
            "carry it on (as Lightning asks for the callbacks a checkpoint was saved with)"
        )
