"""BaseStrategy: what every strategy object sets up and holds (MMEngine's ``BaseStrategy``).

Building one sets up the process as a Runner does: the launcher (``env_kwargs.launcher``, read
from the environment when not given, starting torch.distributed with ``env_kwargs.dist_cfg``),
the seed (``env_kwargs.randomness``), the run's folder ``work_dir/<timestamp>`` and its
logger. ``prepare`` (in the subclasses) then builds and wraps the model, the optim wrapper and
the parameter schedulers; the state dict methods here save and load them whatever the wrapper.
"""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod
from collections.abc import Mapping
from typing import Any

from torch import nn

from runnerx.checkpoint import load_model_weights
from runnerx.checkpoint.runner_state import (
    find_latest_checkpoint,
    load_scheduler_states,
    map_schedulers,
)
from runnerx.dist import (
    from_rank_zero,
    get_rank,
    get_world_size,
    infer_launcher,
    init_dist,
    is_distributed,
)
from runnerx.logging import get_run_logger, make_logger_current
from runnerx.optim import build_optim_wrapper
from runnerx.optim.scheduler import build_param_schedulers
from runnerx.parallel import (
    load_optimizer_state_dict,
    model_state_dict,
    optimizer_state_dict,
    saves_sharded,
)
from runnerx.parallel.options import check_choice
from runnerx.runner.environment import (
    ENV_CFG_KEYS,
    RANDOMNESS_KEYS,
    check_keys,
    make_run_dir,
    set_random_seed,
    setup_env,
)

#: what ``env_kwargs`` takes: MMEngine's ``launcher`` and ``randomness``, and the keys of
#: runnerx's ``env_cfg`` (``dist_cfg``, ``cudnn_benchmark``, ``mp_cfg``, ``matmul_precision``...)
ENV_KWARGS_KEYS = ("launcher", "randomness", *ENV_CFG_KEYS)
LOG_KWARGS_KEYS = ("log_level", "log_file")
LAUNCHERS = ("none", "pytorch", "slurm", "mpi")
#: the attributes ``prepare`` sets
PREPARED = ("model", "optim_wrapper", "param_schedulers")


class BaseStrategy(metaclass=ABCMeta):
    """The process set-up and the state of a training that a script drives itself.

    Takes MMEngine's keyword arguments: ``work_dir='work_dirs'``, ``experiment_name`` (kept
    as given, as runnerx's Runner keeps it; MMEngine appends the timestamp),
    ``env_kwargs=dict(launcher=..., dist_cfg=..., randomness=dict(seed=...), ...)``,
    ``log_kwargs=dict(log_level=..., log_file=...)`` and ``auto_scale_lr=dict(enable=True,
    base_batch_size=...)`` (which needs ``dispatch_kwargs['train_micro_batch_size_per_gpu']``
    in ``prepare``). After ``prepare``, ``model``, ``optim_wrapper`` and ``param_schedulers``
    hold what it built.
    """

    def __init__(
        self,
        *,
        work_dir: str = "work_dirs",
        experiment_name: str | None = None,
        env_kwargs: Mapping | None = None,
        log_kwargs: Mapping | None = None,
        auto_scale_lr: Mapping | None = None,
    ) -> None:
        env_kwargs = dict(env_kwargs or {})
        check_keys(env_kwargs, ENV_KWARGS_KEYS, "env_kwargs")
        self._env_cfg = {k: v for k, v in env_kwargs.items() if k not in ("launcher", "randomness")}
        self._launcher = env_kwargs.get("launcher") or infer_launcher()
        check_choice(self._launcher, LAUNCHERS, "env_kwargs.launcher")
        self._distributed = self._launcher != "none"
        setup_env(self._env_cfg, distributed=self._distributed)  # as MMEngine's strategies
        if self._distributed and not is_distributed():
            init_dist(self._launcher, **(self._env_cfg.get("dist_cfg") or {}))
        self._rank, self._world_size = get_rank(), get_world_size()
        self._randomness = dict(env_kwargs.get("randomness") or {})
        check_keys(self._randomness, RANDOMNESS_KEYS, "env_kwargs.randomness")
        self._seed = set_random_seed(**self._randomness)

        self._work_dir = os.path.abspath(work_dir)
        # rank 0 names and creates the run's folder; every rank logs under that name
        self._timestamp = from_rank_zero(
            lambda: make_run_dir(self._work_dir), "creating the run's folder in work_dir"
        )
        self._log_dir = os.path.join(self._work_dir, self._timestamp)
        self._experiment_name = experiment_name or self._timestamp
        log_kwargs = dict(log_kwargs or {})
        check_keys(log_kwargs, LOG_KWARGS_KEYS, "log_kwargs")
        self.logger = self.build_logger(**log_kwargs)
        self._auto_scale_lr = auto_scale_lr
        self.dispatch_kwargs: dict = {}
        self._prepared = False

    def __getattr__(self, name: str) -> Any:
        # only reached for attributes not set: say what sets the ones prepare() builds
        if name in PREPARED:
            raise AttributeError(
                f"{type(self).__name__}.{name} is set by prepare(): call "
                f"strategy.prepare(model, optim_wrapper=..., param_scheduler=...) first"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    work_dir = property(lambda self: self._work_dir, doc="The absolute work directory.")
    log_dir = property(lambda self: self._log_dir, doc="``work_dir/<timestamp>``: the logs.")
    experiment_name = property(lambda self: self._experiment_name, doc="The run's name.")
    launcher = property(lambda self: self._launcher, doc="none, pytorch, slurm or mpi.")
    distributed = property(lambda self: self._distributed, doc="Whether a launcher started it.")
    seed = property(lambda self: self._seed, doc="The seed this process was seeded with.")
    rank = property(lambda self: self._rank, doc="This process's rank.")
    world_size = property(lambda self: self._world_size, doc="The number of processes.")
    timestamp = property(lambda self: self._timestamp, doc="The run's start, its folder's name.")
    randomness = property(lambda self: self._randomness, doc="``env_kwargs['randomness']``.")

    @abstractmethod
    def prepare(
        self,
        model: nn.Module | dict,
        *,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        compile: bool | Mapping = False,
        dispatch_kwargs: Mapping | None = None,
    ) -> Any:
        """Build and wrap the model (and optim wrapper, schedulers) for this process."""

    @abstractmethod
    def save_checkpoint(self, filename: str, **kwargs: Any) -> None:
        """Save the model (optimizer, schedulers) to ``filename``."""

    @abstractmethod
    def load_checkpoint(self, filename: str, **kwargs: Any) -> dict:
        """Load the model's weights from ``filename``; return the rest of the checkpoint."""

    @abstractmethod
    def resume(self, filename: str, **kwargs: Any) -> dict:
        """Load model, optimizer and scheduler state from ``filename``."""

    def build_logger(self, log_level: str | int = "INFO", log_file: str | None = None) -> Any:
        """The run's logger (rank 0: console and ``log_dir/<timestamp>.log``), made current so
        that ``print_log`` and runnerx's own messages go to it."""
        log_file = log_file or os.path.join(self._log_dir, f"{self._timestamp}.log")
        logger = get_run_logger(log_file, log_level)
        make_logger_current(logger)
        return logger

    def build_optim_wrapper(self, optim_wrapper: Any, model: nn.Module | None = None) -> Any:
        """An optim wrapper for ``model`` (default: the prepared model) from an
        ``optim_wrapper`` config, or a built one as it is; with ``auto_scale_lr`` its lr
        scaled as the Runner scales it (see :mod:`runnerx.optim.lr_scaling`)."""
        from runnerx.optim.lr_scaling import build_with_scaled_lr

        model = self.model if model is None else model
        scale = self._auto_scale_lr
        if scale is None:
            return build_optim_wrapper(model, optim_wrapper)
        batch = self.dispatch_kwargs.get("train_micro_batch_size_per_gpu")
        if batch is None and isinstance(scale, Mapping) and scale.get("enable", False):
            raise KeyError(
                "auto_scale_lr is enabled: give the batch size of one process as "
                "prepare(..., dispatch_kwargs=dict(train_micro_batch_size_per_gpu=...))"
            )
        return build_with_scaled_lr(
            lambda cfg: build_optim_wrapper(model, cfg),
            optim_wrapper,
            scale,
            None if batch is None else self.world_size * batch,
            logger=self.logger,
        )

    def build_param_scheduler(self, scheduler: Any, optim_wrapper: Any = None) -> list | dict:
        """The schedulers of a ``param_scheduler`` config for ``optim_wrapper`` (default: the
        prepared one); ``dispatch_kwargs``' ``max_epochs`` / ``max_iters`` are their default
        ``end`` and its ``epoch_length`` serves ``convert_to_iter_based``."""
        return build_param_schedulers(
            scheduler,
            self.optim_wrapper if optim_wrapper is None else optim_wrapper,
            self.dispatch_kwargs.get("epoch_length"),
            max_epochs=self.dispatch_kwargs.get("max_epochs"),
            max_iters=self.dispatch_kwargs.get("max_iters"),
        )

    # ------------------------------------------------------------------ state dicts

    def model_state_dict(self) -> dict:
        """The model's state dict: whole tensors on the CPU under the plain model's keys (under
        FSDP gathered to rank 0; the others get ``{}``), or each rank's shards when the model
        saves sharded checkpoints. Every rank calls it under FSDP."""
        return model_state_dict(self.model, full=not saves_sharded(self.model))

    def optim_state_dict(self) -> dict:
        """The optim wrapper's state dict (under FSDP keyed by parameter name, see
        :func:`runnerx.parallel.optimizer_state_dict`)."""
        return optimizer_state_dict(
            self.model, self.optim_wrapper, full=not saves_sharded(self.model)
        )

    def scheduler_state_dict(self) -> list | dict:
        """The schedulers' state dicts, in the layout of ``param_schedulers``."""
        return map_schedulers(self.param_schedulers, lambda scheduler: scheduler.state_dict())

    def load_model_state_dict(
        self,
        state_dict: Mapping,
        *,
        strict: bool = False,
        revise_keys: Any = ((r"^module\.", ""),),
    ) -> None:
        """Load ``state_dict`` into the model inside its wrappers, keys rewritten by
        ``revise_keys`` first; without ``strict`` the keys that do not match are logged."""
        missing, unexpected = load_model_weights(self.model, dict(state_dict), strict, revise_keys)
        for kind, keys in (("missing", missing), ("unexpected", unexpected)):
            if keys:
                self.logger.warning(f"{kind} keys in the state dict: {', '.join(keys)}")

    def load_optim_state_dict(self, state_dict: Mapping) -> None:
        """Load an optimizer state dict (as :meth:`optim_state_dict` made it, or a plain one)."""
        load_optimizer_state_dict(self.model, self.optim_wrapper, state_dict)

    def load_scheduler_state_dict(self, state_dict: list | dict) -> None:
        """Load what :meth:`scheduler_state_dict` returned."""
        load_scheduler_states(self.param_schedulers, state_dict)

    def load_or_resume(self, *, load_from: str | None = None, resume: bool | str = False) -> Any:
        """``resume='path'``: resume from it; ``resume=True``: from ``load_from``, else from
        the checkpoint ``work_dir/last_checkpoint`` names (nothing when there is none);
        otherwise load the weights of ``load_from``. Returns the checkpoint, or None."""
        path = resume if isinstance(resume, str) else None
        if resume is True:
            path = load_from or find_latest_checkpoint(self._work_dir)
        if path is not None:
            return self.resume(path)
        return self.load_checkpoint(load_from) if load_from is not None else None

    def _prepared_components(self) -> Any:
        """The model, then the optim wrapper and schedulers when prepared (MMEngine's list)."""
        built = [vars(self)[name] for name in PREPARED if name in vars(self)]
        return built[0] if len(built) == 1 else built

    def _is_prepared(self, name: str) -> bool:
        return name in vars(self)
