"""``num_sanity_val_steps``: run a few validation batches before training starts, so that a
bug in ``val_step``, the validation data or a metric shows in seconds, not after the first
epoch (Lightning's ``Trainer(num_sanity_val_steps=2)``)::

    num_sanity_val_steps = 2    # in a config: the first 2 validation batches; -1: all of them

``runner.train()`` then runs those batches through ``val_step`` and the evaluator after the
model is loaded or resumed and before the ``before_train`` hooks, and throws the metrics away:
no hook is called, and the random number generators and the model's train/eval modes are put
back, so the training that follows is the one a run without the check does. The default, 0,
turns it off; a run without validation, or with ``fast_dev_run``, skips it, as Lightning
does. MMEngine ignores the key, as any key it does not know.
"""

from __future__ import annotations

import time
from typing import Any

from .batch_limits import FirstBatches, evaluated_samples
from .environment import capture_rng_state, modes_kept, restore_rng_state


def sanity_val_batches(value: Any) -> int:
    """``num_sanity_val_steps`` checked: 0 (off), a positive int (that many batches) or -1
    (the whole validation set)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < -1:
        raise ValueError(
            "num_sanity_val_steps must be 0 (off), a positive int (the validation batches to "
            f"run before training) or -1 (the whole validation set), got {value!r}"
        )
    return value


def run_sanity_check(runner: Any) -> None:
    """Run ``runner.num_sanity_val_steps`` validation batches through ``val_step`` and the
    evaluator without calling any hook, leaving the random number generators and the model's
    modes as they were (nothing when the check is off, under ``fast_dev_run``, or without
    validation). An error propagates with a note saying where it happened."""
    batches = runner.num_sanity_val_steps
    loop = runner.val_loop if batches and not runner.fast_dev_run else None
    if loop is None:
        return
    evaluate = getattr(loop, "evaluate_batches", None)
    if evaluate is None:
        runner.logger.warning(
            f"num_sanity_val_steps: {type(loop).__name__} has no evaluate_batches(batches) "
            "method, so the sanity check is skipped (subclass runnerx's ValLoop to get it)"
        )
        return
    dataloader = loop.dataloader if batches == -1 else FirstBatches(loop.dataloader, batches)
    rng_state = capture_rng_state()  # iterating a DataLoader draws from torch's generator
    start = time.perf_counter()
    try:
        with modes_kept(runner.model):  # as found, frozen parts included
            evaluate(dataloader)
    except Exception as error:
        note = (
            "raised in the validation sanity check before training (num_sanity_val_steps="
            f"{batches}); num_sanity_val_steps=0 turns the check off"
        )
        if hasattr(error, "add_note"):  # Python 3.11+
            error.add_note(note)
        else:
            runner.logger.error(note)
        raise
    finally:
        restore_rng_state(rng_state)
    runner.logger.info(
        f"sanity check: {len(dataloader)} validation batches ({evaluated_samples(dataloader)} "
        f"samples) ran through val_step and the evaluator in "
        f"{time.perf_counter() - start:.2f} s, before training"
    )
