"""A warning for LightningModule methods left on a runnerx model, which nothing calls.

A model ported from Lightning often keeps ``training_step``, ``configure_optimizers`` or an
``on_validation_epoch_end`` that updates and resets its metrics; the Runner calls none of them,
so the run trains without their work, silently. :func:`warn_of_lightning_methods` names each
such method once, with the place its work goes in runnerx (docs/lightning.md).
"""

from __future__ import annotations

import inspect
import logging
import weakref

from torch import nn

#: Lightning's hooks, the methods of that name on a LightningModule and on a Callback -> the
#: runnerx hook point that does their work (runnerx.hooks.lightning_callbacks uses it too)
LIGHTNING_HOOK_POINTS = {
    "on_fit_start": "before_run",
    "on_fit_end": "after_run",
    "on_train_start": "before_train",
    "on_train_end": "after_train",
    "on_train_epoch_start": "before_train_epoch",
    "on_train_epoch_end": "after_train_epoch",
    "on_train_batch_start": "before_train_iter",
    "on_train_batch_end": "after_train_iter",
    "on_validation_start": "before_val",
    "on_validation_end": "after_val",
    "on_validation_epoch_start": "before_val_epoch",
    "on_validation_epoch_end": "after_val_epoch",
    "on_validation_batch_start": "before_val_iter",
    "on_validation_batch_end": "after_val_iter",
    "on_test_start": "before_test",
    "on_test_end": "after_test",
    "on_test_epoch_start": "before_test_epoch",
    "on_test_epoch_end": "after_test_epoch",
    "on_test_batch_start": "before_test_iter",
    "on_test_batch_end": "after_test_iter",
    "on_predict_start": "before_test",
    "on_predict_end": "after_test",
    "on_predict_epoch_start": "before_test_epoch",
    "on_predict_epoch_end": "after_test_epoch",
    "on_predict_batch_start": "before_test_iter",
    "on_predict_batch_end": "after_test_iter",
    "on_save_checkpoint": "before_save_checkpoint",
    "on_load_checkpoint": "after_load_checkpoint",
}
#: Lightning's hooks inside its optimization step (on a module and on a Callback): in runnerx,
#: an override of the model's ``train_step``, where no hook point runs
STEP_HOOKS = ("on_before_backward", "on_after_backward", "on_before_optimizer_step")

#: LightningModule method -> where its work goes in runnerx
LIGHTNING_METHODS = {
    "training_step": "forward(..., mode='loss') returning dict(loss=...)",
    "validation_step": "forward(..., mode='predict') and a metric (val_evaluator)",
    "predict_step": "forward(..., mode='predict'), run by runner.test() with DumpResults",
    "configure_optimizers": "the optim_wrapper and param_scheduler keys",
    "configure_callbacks": "custom_hooks",
    "configure_gradient_clipping": "optim_wrapper=dict(..., clip_grad=dict(max_norm=...))",
    "lr_scheduler_step": "the param_scheduler key",
    "train_dataloader": "the train_dataloader key",
    "val_dataloader": "the val_dataloader key",
    "test_dataloader": "the test_dataloader key",
    "predict_dataloader": "the test_dataloader key",
    "training_epoch_end": "a hook's after_train_epoch",
    "validation_epoch_end": "a metric's compute_metrics",
    **{name: f"a hook's {point}" for name, point in LIGHTNING_HOOK_POINTS.items()},
    # epoch-end metric work is a metric's, on a model
    "on_validation_epoch_start": "a hook's before_val_epoch (a metric's state resets itself)",
    "on_validation_epoch_end": "a metric's compute_metrics, or a hook's after_val_epoch",
    "on_test_epoch_end": "a metric's compute_metrics, or a hook's after_test_epoch",
    **dict.fromkeys(STEP_HOOKS, "an override of train_step"),
}
#: runnerx's own steps that Lightning names too; Lightning's form takes ``batch_idx``
_SHARED_STEPS = {"test_step": "forward(..., mode='predict') and a metric (test_evaluator)"}

_warned: weakref.WeakSet[nn.Module] = weakref.WeakSet()


def lightning_methods(model: nn.Module) -> dict[str, str]:
    """The Lightning-only methods that ``model``'s class defines, each with where its work
    goes in runnerx; a ``test_step`` counts when it takes Lightning's ``batch_idx``."""
    cls = type(model)
    found = {name: place for name, place in LIGHTNING_METHODS.items() if _defines(cls, name)}
    for name, place in _SHARED_STEPS.items():
        method = getattr(cls, name, None)
        if callable(method) and "batch_idx" in _parameters(method):
            found[name] = place
    return found


def warn_of_lightning_methods(model: nn.Module) -> None:
    """Log a WARNING (once per model) naming the Lightning-only methods ``model`` defines,
    which the Runner never calls, and where their work goes."""
    found = lightning_methods(model)
    if not found or model in _warned:
        return
    _warned.add(model)
    from runnerx.logging import print_log

    places = "; ".join(f"{name} -> {place}" for name, place in found.items())
    print_log(
        f"{type(model).__name__} defines LightningModule methods that runnerx never calls, so "
        f"their work is not done: {places}. Move that work there (docs/lightning.md, "
        "'The model'); a hook of yours that calls them (runner.model.<method>()) keeps them",
        logger="current",
        level=logging.WARNING,
    )


def _defines(cls: type, name: str) -> bool:
    """Whether ``cls`` or a base class other than nn.Module's has a method ``name``."""
    return callable(getattr(cls, name, None)) and not hasattr(nn.Module, name)


def _parameters(method: object) -> set[str]:
    try:
        return set(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return set()
