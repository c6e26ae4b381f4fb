"""SingleDeviceStrategy: ``prepare`` and the checkpoint methods every strategy object shares.

``prepare`` runs runnerx's own pieces in MMEngine's order: ``runnerx.model.build_model``
(with ``init_weights()``), :func:`runnerx.parallel.prepare_model` with the strategy's
``STRATEGIES`` entry (:meth:`SingleDeviceStrategy.wrapper_cfg`; DDPStrategy and FSDPStrategy
only change that), ``runnerx.optim.build_optim_wrapper`` and the scheduler builder.
Checkpoints are runnerx's: one file written by rank 0, or, for a model that saves sharded
checkpoints (``FSDPStrategy(state_dict_cfg='local')``), a folder every rank writes to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any

from torch import nn

from runnerx.checkpoint import save_checkpoint
from runnerx.checkpoint.loader import CheckpointLoader
from runnerx.dist import barrier, get_rank
from runnerx.model import build_model
from runnerx.optim import OptimWrapperDict
from runnerx.parallel import (
    default_device,
    load_sharded_checkpoint,
    prepare_model,
    save_sharded_checkpoint,
    saves_sharded,
    unwrap,
)
from runnerx.runner.environment import set_random_seed
from runnerx.version import __version__

from .base import BaseStrategy

MODULE_PREFIX = ((r"^module\.", ""),)


class SingleDeviceStrategy(BaseStrategy):
    """One process on one device (MMEngine's ``SingleDeviceStrategy``): the model as it is,
    its SyncBatchNorm layers turned back into BatchNorm::

        strategy = SingleDeviceStrategy(work_dir='work_dirs/x',
                                        env_kwargs=dict(randomness=dict(seed=0)))
        model, optim_wrapper = strategy.prepare(
            dict(type='DigitsConvNet'), optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1)))
    """

    def wrapper_cfg(self) -> dict:
        """The ``strategy`` config (a ``STRATEGIES`` entry) that wraps the model."""
        return {"type": "SingleDeviceStrategy"}

    def prepare(
        self,
        model: nn.Module | dict,
        *,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        compile: bool | Mapping = False,
        dispatch_kwargs: Mapping | None = None,
    ) -> Any:
        """Build (a ``MODELS`` dict), initialise, place, compile and wrap ``model``; build the
        optim wrapper for it and the schedulers. Returns the model, or the list ``[model,
        optim_wrapper]`` or ``[model, optim_wrapper, param_schedulers]`` (as MMEngine does;
        a second call returns the same). ``dispatch_kwargs``: ``max_iters`` / ``max_epochs``
        (the schedulers' default ``end``; ``max_iters`` is needed with
        ``accumulative_counts > 1``), ``epoch_length``, ``train_micro_batch_size_per_gpu``
        (for ``auto_scale_lr``), ``init_weights_for_test_or_val=False`` to skip
        ``init_weights()``. A built optimizer is pointed at the parameters the wrapper put in
        place of the model's (FSDP shards them), so it may be built before ``prepare``."""
        if self._prepared:
            return self._prepared_components()
        if param_scheduler is not None and optim_wrapper is None:
            raise ValueError(
                "prepare(param_scheduler=...) needs optim_wrapper=...: the schedulers change "
                "the learning rate of its optimizer"
            )
        self.dispatch_kwargs.update(dispatch_kwargs or {})
        init_weights = self.dispatch_kwargs.get("init_weights_for_test_or_val", True)
        model = build_model(model, init_weights=init_weights)
        built_optimizer = optim_wrapper is not None and not isinstance(optim_wrapper, Mapping)
        names = {id(p): name for name, p in model.named_parameters()} if built_optimizer else {}
        self.model = prepare_model(
            model, strategy=self.wrapper_cfg(), compile=compile, env_cfg=self._env_cfg
        )
        if optim_wrapper is not None:
            self.optim_wrapper = self.build_optim_wrapper(optim_wrapper, self.model)
            if built_optimizer:
                _follow_replaced_parameters(self.optim_wrapper, unwrap(self.model), names)
            self._count_from(0)
        if param_scheduler is not None:
            self.param_schedulers = self.build_param_scheduler(param_scheduler)
        self._prepared = True
        return self._prepared_components()

    def save_checkpoint(
        self,
        filename: str,
        *,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        extra_ckpt: Mapping | None = None,
        callback: Callable[[dict], Any] | None = None,
    ) -> None:
        """Save ``dict(state_dict, optimizer, param_schedulers, meta, **extra_ckpt)`` to the
        file ``filename`` (written by rank 0, atomically; the model's full state dict), or,
        when the model saves sharded checkpoints, to the folder ``filename`` (every rank its
        shards, ``extra.pth`` the rest). All ranks call it. ``callback(checkpoint)`` may change
        the dict before it is written (for a folder it gets the entries beside the shards)."""
        extra = dict(extra_ckpt or {})
        extra["meta"] = {
            **extra.get("meta", {}),
            "seed": self.seed,
            "time": time.strftime("%Y%m%d_%H%M%S", time.localtime()),
            "runnerx_version": __version__,
        }
        if save_param_scheduler and self._is_prepared("param_schedulers"):
            extra["param_schedulers"] = self.scheduler_state_dict()
        save_optimizer = save_optimizer and self._is_prepared("optim_wrapper")
        if saves_sharded(self.model):
            if callback is not None:
                callback(extra)
            optim_wrapper = self.optim_wrapper if save_optimizer else None
            save_sharded_checkpoint(filename, self.model, optim_wrapper, extra=extra)
            return
        checkpoint = {"state_dict": self.model_state_dict()}
        if save_optimizer:
            checkpoint["optimizer"] = self.optim_state_dict()
        checkpoint.update(extra)
        if get_rank() == 0:
            if callback is not None:
                callback(checkpoint)
            save_checkpoint(checkpoint, filename)
        barrier()  # the file is whole before any rank goes on (to load it, say)

    def load_checkpoint(
        self,
        filename: str,
        *,
        map_location: Any = "cpu",
        strict: bool = False,
        revise_keys: Any = MODULE_PREFIX,
        callback: Callable[[dict], Any] | None = None,
    ) -> dict:
        """Load the model's weights from ``filename`` (a file, URL or sharded folder) and return
        the rest of the checkpoint. ``map_location='default'`` is this process's device;
        ``callback(checkpoint)`` sees the checkpoint first (for a folder: once the shards are
        loaded, the other entries). Under FSDP every rank calls it."""
        self.logger.info(f"Load checkpoint from {filename}")
        if os.path.isdir(filename):
            checkpoint = load_sharded_checkpoint(filename, self.model)
            if callback is not None:
                callback(checkpoint)
            return checkpoint
        location = default_device() if map_location == "default" else map_location
        checkpoint = CheckpointLoader.load_checkpoint(filename, map_location=location)
        if callback is not None:
            callback(checkpoint)
        state = checkpoint.pop("state_dict") if "state_dict" in checkpoint else checkpoint
        self.load_model_state_dict(state, strict=strict, revise_keys=revise_keys)
        return checkpoint if state is not checkpoint else {}

    def resume(
        self,
        filename: str,
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: Any = "default",
        callback: Callable[[dict], Any] | None = None,
    ) -> dict:
        """Continue from ``filename``: the model, the optimizer and the schedulers (those that
        were prepared), and the seed (``meta['seed']``; the random generators are seeded with
        it again, as in MMEngine). With gradient accumulation the window restarts at
        ``meta['iter']`` (0 when the checkpoint does not say). Returns the checkpoint's other
        entries."""
        self.logger.info(f"Resume checkpoint from {filename}")
        resume_optimizer = resume_optimizer and self._is_prepared("optim_wrapper")
        if os.path.isdir(filename):
            optim_wrapper = self.optim_wrapper if resume_optimizer else None
            checkpoint = load_sharded_checkpoint(filename, self.model, optim_wrapper)
            if callback is not None:
                callback(checkpoint)
        else:
            checkpoint = self.load_checkpoint(
                filename, map_location=map_location, callback=callback
            )
            if resume_optimizer:
                if "optimizer" not in checkpoint:
                    raise KeyError(
                        f"{filename} holds no optimizer state; resume it with "
                        "resume_optimizer=False, or save it with save_optimizer=True"
                    )
                self.load_optim_state_dict(checkpoint.pop("optimizer"))
        restore_schedulers = resume_param_scheduler and self._is_prepared("param_schedulers")
        if restore_schedulers and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(checkpoint.pop("param_schedulers"))
        meta = checkpoint.get("meta", {})
        self._continue_seed(meta.get("seed"))
        if self._is_prepared("optim_wrapper"):
            self._count_from(int(meta.get("iter", 0)))
        return checkpoint

    def _continue_seed(self, saved: Any) -> None:
        """Seed again with the checkpoint's seed where it differs from ``randomness.seed``."""
        configured = self._randomness.get("seed")
        if saved is None or saved == configured:
            return
        if configured is not None:
            self.logger.warning(
                f"randomness.seed is {configured} but the checkpoint was saved with seed "
                f"{saved}: continuing with {saved}"
            )
        self._randomness["seed"] = saved
        self._seed = set_random_seed(**self._randomness)

    def _count_from(self, iteration: int) -> None:
        """Tell an accumulating optim wrapper where its windows stand (``iteration`` done of
        ``dispatch_kwargs['max_iters']``)."""
        counts = getattr(self.optim_wrapper, "_accumulative_counts", 1)
        if counts == 1:
            return
        if "max_iters" not in self.dispatch_kwargs:
            raise ValueError(
                f"optim_wrapper.accumulative_counts={counts} needs the length of the training: "
                "prepare(..., dispatch_kwargs=dict(max_iters=...))"
            )
        self.optim_wrapper.initialize_count_status(
            unwrap(self.model), iteration, self.dispatch_kwargs["max_iters"]
        )


def _follow_replaced_parameters(optim_wrapper: Any, model: nn.Module, names: dict) -> None:
    """Point a built optimizer at the parameters of ``model`` that replaced the ones it was
    built with (FSDP puts sharded parameters in their place); ``names`` maps the id of each
    original parameter to its name. Its state must still be empty: it belongs to the old ones."""
    current = dict(model.named_parameters())
    wrappers = (
        optim_wrapper.values() if isinstance(optim_wrapper, OptimWrapperDict) else [optim_wrapper]
    )
    for wrapper in wrappers:
        optimizer = getattr(wrapper, "optimizer", wrapper)
        for group in optimizer.param_groups:
            replaced = [current.get(names.get(id(param)), param) for param in group["params"]]
            if all(new is old for new, old in zip(replaced, group["params"])):
                continue
            if optimizer.state:
                raise ValueError(
                    "optim_wrapper: the built optimizer has stepped already, but the strategy "
                    "replaced the model's parameters (FSDP shards them); build it before any "
                    "step, or give prepare() an optim_wrapper config"
                )
            group["params"] = replaced
