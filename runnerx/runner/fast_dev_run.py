"""``fast_dev_run``: run a whole config end to end on a few batches, to find its bugs in
seconds (Lightning's ``Trainer(fast_dev_run=N)``)::

    fast_dev_run = 2    # in a config; or: python tools/train.py CONFIG --fast-dev-run 2

With N batches (``True`` means 1), ``runner.train()`` runs one pass of at most N training
iterations and then one validation of at most N batches, whatever ``val_begin`` and
``val_interval`` say; ``runner.val()`` and ``runner.test()`` evaluate at most N batches. The
loops apply the limit once per pass, so a run without ``fast_dev_run`` pays nothing for it.
No checkpoint is written (CheckpointHook and PreemptionHook are left out), and LoggerHook logs
every iteration. MMEngine ignores the key, as any key it does not know, so a config that sets
it still runs there, in full.
"""

from __future__ import annotations

from typing import Any


def fast_dev_run_batches(value: Any, resume: Any) -> int:
    """The batches per pass that ``fast_dev_run`` asks for (0: off), checked: ``False`` or
    None (off), ``True`` (1) or a positive int; refused together with ``resume``."""
    if value is None or value is False:
        return 0
    batches = 1 if value is True else value
    if not isinstance(batches, int) or batches < 1:  # False and True are settled above
        raise ValueError(
            "fast_dev_run must be False (off), True (1 batch) or a positive int (the batches "
            f"to train, validate and test), got {value!r}"
        )
    if resume:
        raise ValueError(
            f"fast_dev_run={value!r} cannot be combined with resume={resume!r}: a smoke test "
            "starts from the beginning; set resume=False and load_from=<checkpoint> to start "
            "from a checkpoint's weights"
        )
    return batches


def fast_dev_run_hooks(runner: Any, hooks: list) -> list:
    """``hooks`` as a fast_dev_run uses them (unchanged when it is off): without the hooks
    that save checkpoints, with LoggerHook logging every iteration. Says so in the log."""
    batches = runner.fast_dev_run
    if not batches:
        return hooks
    runner.logger.info(
        f"fast_dev_run={batches}: train() runs {batches} training iteration(s) and then one "
        f"validation of at most {batches} batch(es); val() and test() run at most {batches} "
        "batch(es); no checkpoints are saved (CheckpointHook and PreemptionHook are left out) "
        "and LoggerHook logs every iteration"
    )
    return [hook for hook in hooks if kept_in_fast_dev_run(runner, hook)]


def kept_in_fast_dev_run(runner: Any, hook: Any) -> bool:
    """Whether ``hook`` takes part in the run: always, unless a fast_dev_run leaves it out
    (CheckpointHook and PreemptionHook, and their subclasses). A LoggerHook it keeps is set to
    log every iteration. The Runner asks for its hooks and for each one registered later."""
    if not runner.fast_dev_run:
        return True
    from runnerx.hooks import CheckpointHook, LoggerHook, PreemptionHook

    if isinstance(hook, LoggerHook):
        hook.interval = 1
    return not isinstance(hook, (CheckpointHook, PreemptionHook))


def limit_loop(runner: Any, loop: Any) -> Any:
    """``loop``, limited to fast_dev_run's batches through its ``apply_fast_dev_run(batches)``
    (unchanged when fast_dev_run is off). A loop without that method, a registered loop of a
    user's own, runs in full, with a warning."""
    batches = runner.fast_dev_run
    if not batches or loop is None:
        return loop
    apply = getattr(loop, "apply_fast_dev_run", None)
    if apply is None:
        runner.logger.warning(
            f"fast_dev_run: {type(loop).__name__} has no apply_fast_dev_run(batches) method, "
            "so it runs in full (subclass one of runnerx's loops to get the limit)"
        )
    else:
        apply(batches)
    return loop
