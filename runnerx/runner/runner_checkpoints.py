"""The Runner's checkpoint methods, MMEngine's names and arguments: each hands the Runner to
:mod:`runnerx.checkpoint.runner_state`, where saving, loading and resuming a run live::

    runner.save_checkpoint(runner.work_dir, 'epoch_3.pth')
    runner.load_checkpoint('work_dirs/x/epoch_3.pth')   # weights only (load_from)
    runner.resume('work_dirs/x/epoch_3.pth')            # weights, optimizer, schedulers, counters
"""

from __future__ import annotations

from typing import Any

from runnerx.suggest import refuse_unknown_keywords


class RunnerCheckpoints:
    """Save, load and resume methods of :class:`~runnerx.runner.Runner` (a base class of it)."""

    def save_checkpoint(
        self,
        out_dir: str,
        filename: str,
        file_client_args: dict | None = None,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        meta: dict | None = None,
        by_epoch: bool = True,
        backend_args: dict | None = None,
        *,
        background: bool = False,
        **unknown: Any,
    ) -> str:
        """Save the run's state to ``out_dir/filename`` (atomically, on rank 0) and return its
        path; the file is complete when this returns. MMEngine's arguments, in its order:
        ``file_client_args`` (deprecated) or ``backend_args`` may name the local disk only,
        and ``out_dir`` must be a local folder (CheckpointHook's ``out_dir`` copies to other
        stores). ``background=True`` (what CheckpointHook asks for) leaves the file's fsync
        and rename to the writer thread: ``runnerx.fileio.wait_for_pending_writes()`` waits
        for it."""
        from runnerx.checkpoint.runner_state import save_runner_checkpoint
        from runnerx.fileio.paths import backend_args_of, local_path

        name = f"{type(self).__name__}.save_checkpoint"
        refuse_unknown_keywords(name, unknown, self.save_checkpoint)
        backend_args = backend_args_of(file_client_args, backend_args)
        try:
            out_dir = local_path(out_dir, backend_args, name)
        except ValueError as error:
            raise ValueError(
                f"{error}\n{name} writes to a local folder only; for copies in a store, give "
                "default_hooks.checkpoint.out_dir (CheckpointHook copies each checkpoint there)"
            ) from error
        return save_runner_checkpoint(
            self,
            out_dir,
            filename,
            save_optimizer=save_optimizer,
            save_param_scheduler=save_param_scheduler,
            meta=meta,
            by_epoch=by_epoch,
            background=background,
        )

    def load_checkpoint(
        self,
        filename: str,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Any = ((r"^module\.", ""), (r"^_orig_mod\.", "")),
    ) -> dict:
        """Load model weights from ``filename`` (``load_from``), reporting key mismatches.
        MMEngine's arguments, in its order: ``map_location`` is ``torch.load``'s (the model
        takes the values onto its own device either way); ``revise_keys`` drops the
        ``module.`` of a DDP model's keys, as MMEngine's, and the ``_orig_mod.`` of a
        ``torch.compile``d one's (a ``torch.save(model.state_dict())`` of it), which a config's
        ``load_from`` could not otherwise load. Once called, ``train()``, ``val()`` and ``test()``
        no longer act on the config's ``load_from`` / ``resume``."""
        from runnerx.checkpoint.runner_state import load_runner_weights

        checkpoint = load_runner_weights(self, filename, strict, revise_keys, map_location)
        self._has_loaded = True  # as in MMEngine: train() keeps these weights
        return checkpoint

    def resume(
        self,
        filename: str,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: Any = "default",
    ) -> dict:
        """Continue a run from ``filename``: weights, optimizer, schedulers, counters (the
        optim wrapper and schedulers are built first when they are still configs). Hooks see
        a resume (``runner._resume``, which EMAHook reads) also when it is called directly.
        ``map_location`` is ``torch.load``'s; MMEngine's ``'default'`` reads onto the CPU here,
        and the model and optimizer take their values onto their own devices. Once it has
        resumed, ``train()`` goes on from here and no longer acts on the config's ``load_from``
        / ``resume``, as in MMEngine."""
        from runnerx.checkpoint.runner_state import resume_runner

        self._build_optimization()
        configured, self._resume = self._resume, self._resume or filename
        try:
            checkpoint = resume_runner(
                self, filename, resume_optimizer, resume_param_scheduler, map_location
            )
        finally:
            self._resume = configured
        self._has_loaded = True  # as in MMEngine: train() goes on from here
        return checkpoint

    def load_or_resume(self) -> None:
        """Act on ``resume`` / ``load_from`` once per Runner (see docs/checkpoint.md)."""
        if not self._has_loaded:
            self._has_loaded = True
            from runnerx.checkpoint.runner_state import load_or_resume

            load_or_resume(
                self, self._resume if self._train_loop_cfg[1] else False, self._load_from
            )
