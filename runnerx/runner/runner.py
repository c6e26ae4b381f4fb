"""Runner: builds a training run from a config and runs it (orchestration only).

.. code-block:: python

    from runnerx import Config
    from runnerx.runner import Runner

    runner = Runner.from_cfg(Config.fromfile('configs/digits_convnet.py'))
    runner.train()

Everything is built by the concept it belongs to (``runnerx.data.build_dataloader``,
``runnerx.optim.build_optim_wrapper``, ``runnerx.hooks.build_hooks``, ...); the Runner holds
the results, calls the hooks and owns the work directory.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from torch import nn

from runnerx.config import Config
from runnerx.data import stop_workers
from runnerx.dist import from_rank_zero, get_rank, get_world_size, is_distributed
from runnerx.fileio import wait_for_pending_writes
from runnerx.registry import RUNNERS, DefaultScope

from .arguments import check_model_step, check_run_parts, init_parameters
from .batch_limits import unlimited
from .environment import (
    RANDOMNESS_KEYS,
    check_keys,
    make_run_dir,
    modes_kept,
    restore_signal_handlers,
    signal_handlers,
    unknown_scope_warning,
)
from .fast_dev_run import (
    fast_dev_run_batches,
    fast_dev_run_hooks,
    kept_in_fast_dev_run,
    limit_loop,
)
from .loops import EpochBasedTrainLoop
from .mmengine_api import MMEngineRunnerAPI, config_copy
from .runner_checkpoints import RunnerCheckpoints
from .sanity_check import run_sanity_check, sanity_val_batches
from .setup_steps import RunnerSetupSteps
from .work_dir_lock import work_dir_lock


@RUNNERS.register_module()
class Runner(RunnerSetupSteps, RunnerCheckpoints, MMEngineRunnerAPI):
    """Runs training, validation and test from MMEngine's arguments.

    Build it from a whole config with ``Runner.from_cfg(cfg)`` (each argument is read from
    the config key of its name), or from config dicts and objects::

        runner = Runner(
            model=dict(type='DigitsConvNet'),
            work_dir='work_dirs/digits',
            train_dataloader=dict(
                dataset=dict(type='DigitsDataset', split='train'),
                sampler=dict(type='DefaultSampler', shuffle=True),
                collate_fn=dict(type='default_collate'),
                batch_size=64,
            ),
            train_cfg=dict(by_epoch=True, max_epochs=8),
            optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9)),
        )
        runner.train()

    ``train_dataloader``, ``train_cfg`` and ``optim_wrapper`` come together, as do the three
    ``val_*`` and the three ``test_*`` keys. Every argument and key: docs/runner.md.
    """

    def __init__(
        self,
        model: nn.Module | dict,
        work_dir: str,
        train_dataloader: Any = None,
        val_dataloader: Any = None,
        test_dataloader: Any = None,
        train_cfg: dict | None = None,
        val_cfg: dict | None = None,
        test_cfg: dict | None = None,
        auto_scale_lr: dict | None = None,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        val_evaluator: Any = None,
        test_evaluator: Any = None,
        default_hooks: dict | None = None,
        custom_hooks: list | None = None,
        data_preprocessor: dict | None = None,
        load_from: str | None = None,
        resume: bool | str = False,
        launcher: str = "none",
        env_cfg: dict | None = None,
        log_processor: dict | None = None,
        log_level: str | int = "INFO",
        visualizer: Any = None,
        default_scope: str | None = None,
        randomness: dict | None = None,
        experiment_name: str | None = None,
        cfg: Config | dict | None = None,
        unsafe_load: bool = False,
        fast_dev_run: bool | int = False,
        num_sanity_val_steps: int = 0,
    ) -> None:
        self.fast_dev_run = fast_dev_run_batches(fast_dev_run, resume)  # see fast_dev_run.py
        self.num_sanity_val_steps = sanity_val_batches(num_sanity_val_steps)  # sanity_check.py
        self.cfg = config_copy(cfg, shared=locals().values())  # the arguments stay as given
        self._launcher = launcher
        self._env_cfg = env_cfg = dict(env_cfg or {})  # wrap_model reads it too
        self.setup_env(env_cfg)
        randomness = dict(randomness or {})
        check_keys(randomness, RANDOMNESS_KEYS, "randomness")
        self._randomness_cfg = randomness  # MMEngine's name: its loops read it
        self.set_randomness(**randomness)

        self.work_dir = os.path.abspath(work_dir)
        # rank 0 names and creates the run's folder; every rank logs under that name
        self.timestamp = from_rank_zero(
            lambda: make_run_dir(self.work_dir), "creating the run's folder in work_dir"
        )
        self.log_dir = os.path.join(self.work_dir, self.timestamp)
        self._experiment_name = experiment_name or self._default_experiment_name()

        self.default_scope = None
        if default_scope is not None:  # before the visualizer: it may be the scope's own
            self.default_scope = DefaultScope.get_instance(
                self._experiment_name, scope_name=default_scope
            )
        self._init_logging(log_level, log_processor, visualizer)  # setup_steps.py
        self._warn_of_left_out_overrides()  # mmengine_api.py
        if default_scope is not None and (warning := unknown_scope_warning(default_scope)):
            self.logger.warning(warning)

        self._load_from = load_from
        self._resume = resume
        self._has_loaded = False
        self._in_train = False  # inside train(): a val()/test() a hook calls keeps its modes
        self._loading_to_evaluate = False  # load_from for val()/test() alone: shapes must fit
        self.unsafe_load = unsafe_load  # trusted checkpoints only: they may run pickled code
        self.model = self._build_model(model, data_preprocessor)
        self._hook_cache: dict[str, list] = {}
        self._register_hooks(default_hooks, custom_hooks)

        # Built when the run that needs them starts (train/val/test), as MMEngine does.
        self._train_loop_cfg = (train_dataloader, train_cfg)
        self._val_loop_cfg = (val_dataloader, val_cfg, val_evaluator)
        self._test_loop_cfg = (test_dataloader, test_cfg, test_evaluator)
        check_run_parts(
            train_dataloader=train_dataloader,
            train_cfg=train_cfg,
            optim_wrapper=optim_wrapper,
            param_scheduler=param_scheduler,
            val_dataloader=val_dataloader,
            val_cfg=val_cfg,
            val_evaluator=val_evaluator,
            test_dataloader=test_dataloader,
            test_cfg=test_cfg,
            test_evaluator=test_evaluator,
        )
        self._train_loop: Any = None
        self._val_loop: Any = None
        self._test_loop: Any = None
        self.optim_wrapper = optim_wrapper
        self.auto_scale_lr = auto_scale_lr
        self.param_schedulers = param_scheduler
        self.dump_config()

    @classmethod
    def from_cfg(cls, cfg: Config | dict) -> Runner:
        """Build a Runner from a whole config: each argument of ``__init__`` is read from the
        config key of its name (MMEngine's keys; see docs/runner.md), so a ``runner_type``
        subclass gets its own extra arguments from the config too."""
        cfg = config_copy(cfg)  # the arguments too are read from the copy
        kwargs: dict[str, Any] = {"cfg": cfg}
        for parameter in init_parameters(cls):
            name = parameter.name
            if name in kwargs:
                continue
            if name not in cfg and parameter.default is parameter.empty:
                hint = " or pass --work-dir to tools/train.py" if name == "work_dir" else ""
                raise KeyError(f"the config has no {name}: {cls.__name__} needs it (set it{hint})")
            kwargs[name] = cfg.get(name, parameter.default)
        return cls(**kwargs)

    # ----------------------------------------------------------------- set-up pieces

    def _init_distributed(self, launcher: str, dist_cfg: dict) -> None:
        if launcher not in ("none", "pytorch", "slurm", "mpi"):
            raise ValueError(f"launcher must be none, pytorch, slurm or mpi; got {launcher!r}")
        if launcher != "none" and not is_distributed():
            from runnerx.dist.launch import init_dist

            init_dist(launcher, **dist_cfg)
        self.rank = get_rank()
        self.world_size = get_world_size()
        self.distributed = self.world_size > 1

    def _default_experiment_name(self) -> str:
        if self.cfg.filename:
            stem = os.path.splitext(os.path.basename(self.cfg.filename))[0]
            return f"{stem}_{self.timestamp}"
        return self.timestamp

    def _register_hooks(self, default_hooks: dict | None, custom_hooks: list | None) -> None:
        from runnerx.hooks import build_hooks, check_hook_points, format_hook_table

        self._hooks = fast_dev_run_hooks(self, build_hooks(default_hooks, custom_hooks))
        self._hook_cache.clear()
        self.logger.info(f"Hooks will be called in this order:\n{format_hook_table(self._hooks)}")
        for warning in {w: None for hook in self._hooks for w in check_hook_points(hook)}:
            self.logger.warning(warning)

    def register_hook(self, hook: Any, priority: int | str | None = None) -> None:
        """Add a hook (object or config) after the Runner was built, keeping priority order;
        ``priority``, when given, wins over the config's own ``priority`` (as in MMEngine)."""
        from runnerx.hooks import Hook, check_hook_points, get_priority
        from runnerx.registry import HOOKS

        if not isinstance(hook, (dict, Hook)):
            raise TypeError(f"a hook must be a Hook or a config dict, got {hook!r}")
        if isinstance(hook, dict):
            hook = dict(hook)
            cfg_priority = hook.pop("priority", None)
            priority = cfg_priority if priority is None else priority
            hook = HOOKS.build(hook)
        if priority is not None:
            hook.priority = priority
        for warning in check_hook_points(hook):
            self.logger.warning(warning)
        if not kept_in_fast_dev_run(self, hook):
            self.logger.info(f"fast_dev_run: {type(hook).__name__} is left out")
            return
        rank = get_priority(hook.priority)
        position = sum(1 for other in self._hooks if get_priority(other.priority) <= rank)
        self._hooks.insert(position, hook)
        self._hook_cache.clear()

    # ----------------------------------------------------------------- hooks

    @property
    def hooks(self) -> list:
        """The hooks, in the order they are called."""
        return self._hooks

    def hook_methods(self, point: str, fresh: bool = False) -> list:
        """Bound methods of the hooks that implement ``point``, in priority order (``fresh``:
        asked anew, not remembered from an earlier call)."""
        methods = None if fresh else self._hook_cache.get(point)
        if methods is None:
            from runnerx.hooks import HOOK_POINTS

            if point in HOOK_POINTS:
                implements = [point in hook.overridden_points() for hook in self._hooks]
            else:  # a point of a custom loop's own: any hook's method of that name
                implements = [callable(getattr(hook, point, None)) for hook in self._hooks]
            methods = [getattr(h, point) for h, yes in zip(self._hooks, implements) if yes]
            self._hook_cache[point] = methods
        return methods

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call every hook that implements ``fn_name`` (MMEngine's name for a hook point)."""
        for method in self.hook_methods(fn_name):
            method(self, **kwargs)

    # ----------------------------------------------------------------- building on demand

    @staticmethod
    def build_dataloader(
        dataloader: Any,
        seed: int | None = None,
        diff_rank_seed: bool = False,
        cfg_key: str = "dataloader",
    ) -> Any:
        """A DataLoader from a config dict (or the object itself), static as in MMEngine:
        ``Runner.build_dataloader(cfg.test_dataloader)`` works in a script. The loops pass
        the Runner's ``seed`` and ``diff_rank_seed`` (see ``runnerx.data.build_dataloader``)."""
        from runnerx.data import build_dataloader

        return build_dataloader(dataloader, seed, diff_rank_seed, cfg_key)

    def build_evaluator(self, evaluator: Any, key: str = "val_evaluator") -> Any:
        """An Evaluator from a config (metric dict, list, Evaluator dict) or object."""
        from runnerx.evaluator import build_evaluator

        return build_evaluator(evaluator, key=key)

    @property
    def train_loop(self) -> Any:
        """The training loop, built from ``train_cfg`` the first time it is needed (None
        without ``train_cfg``, as in MMEngine)."""
        if self._train_loop is None and self._train_loop_cfg[1] is not None:
            self._train_loop = limit_loop(self, self.build_train_loop(self._train_loop_cfg[1]))
        return self._train_loop

    @property
    def val_loop(self) -> Any:
        """The validation loop, or None when the config has no validation."""
        if self._val_loop is None and self._val_loop_cfg[1] is not None:
            self._val_loop = limit_loop(self, self.build_val_loop(self._val_loop_cfg[1]))
        return self._val_loop

    @property
    def test_loop(self) -> Any:
        """The test loop, or None when the config has no test."""
        if self._test_loop is None and self._test_loop_cfg[1] is not None:
            self._test_loop = limit_loop(self, self.build_test_loop(self._test_loop_cfg[1]))
        return self._test_loop

    @property
    def train_dataloader(self) -> Any:
        """The training DataLoader (None without training)."""
        return None if self.train_loop is None else self.train_loop.dataloader

    @property
    def val_dataloader(self) -> Any:
        """The validation DataLoader (None without validation)."""
        return None if self.val_loop is None else self.val_loop.dataloader

    @property
    def test_dataloader(self) -> Any:
        """The test DataLoader (None without test)."""
        return None if self.test_loop is None else self.test_loop.dataloader

    @property
    def epoch(self) -> int:
        """Finished training epochs."""
        return self._train_loop.epoch if self._train_loop is not None else 0

    @property
    def iter(self) -> int:
        """Finished training iterations."""
        return self._train_loop.iter if self._train_loop is not None else 0

    @property
    def max_epochs(self) -> int:
        """Epochs the training runs (1 for iteration-based training, 0 without training)."""
        return 0 if self.train_loop is None else self.train_loop.max_epochs

    @property
    def max_iters(self) -> int:
        """Iterations the training runs (0 without training)."""
        return 0 if self.train_loop is None else self.train_loop.max_iters

    @property
    def experiment_name(self) -> str:
        """The run's name: ``<config name>_<timestamp>`` unless the config names one."""
        return self._experiment_name

    @property
    def launcher(self) -> str:
        """How the processes were started: none, pytorch, slurm or mpi."""
        return self._launcher

    # ----------------------------------------------------------------- running

    def train(self) -> nn.Module:
        """Train (validating as ``train_cfg`` says) and return the model. Rank 0 holds the work
        dir's lock meanwhile: another training in this work dir stops at once (docs/runner.md)."""
        log_file = os.path.join(self.log_dir, f"{self.timestamp}.log")
        with work_dir_lock(self.work_dir, log_file, self.logger):
            self._in_train = True
            try:
                return self._train()
            finally:
                self._in_train = False
                _stop_workers(self._train_loop, self._val_loop)

    def _train(self) -> nn.Module:
        self._make_current()
        check_model_step(self.model, self.unwrapped_model, "train")  # as MMEngine's train()
        loop = self._training_loop()
        self._build_optimization()
        epoch_length = len(loop.dataloader) if isinstance(loop, EpochBasedTrainLoop) else None
        self.val_loop  # noqa: B018  (build it now so its errors come before training starts)
        self._hook_cache.clear()  # hooks may settle their points anew in before_train
        self.call_hook("before_run")
        self.load_or_resume()
        self._first_iter = loop.iter  # a failure before it changes is not reported with a resume
        self.optim_wrapper.initialize_count_status(
            self.unwrapped_model, loop.iter, loop.max_iters, epoch_length
        )
        handlers = signal_handlers()
        try:
            run_sanity_check(self)  # before the before_train hooks, as Lightning
            model = loop.run()
            self.call_hook("after_run")
        except BaseException as error:
            # a failed run still finishes the checkpoints already handed to the writer thread,
            # and leaves the signal handlers as it found them
            restore_signal_handlers(handlers)
            with contextlib.suppress(Exception):
                wait_for_pending_writes(owner=self)
            self._close_visualizer(error)
            raise
        wait_for_pending_writes(owner=self)
        return model

    def val(self) -> dict:
        """Run validation once and return the metrics."""
        return self._evaluate("val")

    def test(self) -> dict:
        """Run the test once and return the metrics."""
        return self._evaluate("test")

    def _evaluate(self, stage: str) -> dict:
        self._make_current()
        loop = getattr(self, f"{stage}_loop")
        if loop is None:
            raise RuntimeError(
                f"this Runner has no {stage}_dataloader / {stage}_cfg / {stage}_evaluator"
            )
        self.call_hook("before_run")
        self._loading_to_evaluate = not self._in_train
        try:
            self.load_or_resume()
        finally:
            self._loading_to_evaluate = False
        # called from a hook mid-training, the training goes on in the modes it had (its own
        # validations restore them; MMEngine's iteration loop calls model.train() per batch)
        kept = modes_kept(self.model) if self._in_train else contextlib.nullcontext()
        try:
            with kept:
                metrics = loop.run()
            self.call_hook("after_run")
        except BaseException as error:
            self._close_visualizer(error)
            raise
        finally:
            _stop_workers(loop)
        return metrics

    def _close_visualizer(self, error: BaseException) -> None:
        """After a run failed with ``error`` (no ``after_run``): let the visualizer's backends
        record the failure (an MLflow run ends FAILED, ...) and write out what they hold (a
        TensorBoard writer buffers up to two minutes of scalars)."""
        with contextlib.suppress(Exception):  # one not derived from Visualizer may lack it
            self.visualizer.mark_failed(error)
        with contextlib.suppress(Exception):
            self.visualizer.close()

    def _make_current(self) -> None:
        """Let this run's logger, MessageHub, visualizer and default scope be the current
        ones, which another Runner built since this one would otherwise be."""
        from runnerx.logging.run_logging import make_current

        make_current(self.logger, self.message_hub, self.visualizer)
        if self.default_scope is not None:
            self.default_scope.make_current()


def _stop_workers(*loops: Any) -> None:
    """Stop the persistent dataloader workers of ``loops`` (None: a loop never built), whose
    run is over (see :func:`runnerx.data.stop_workers`)."""
    for loop in loops:
        stop_workers(unlimited(getattr(loop, "dataloader", None)))  # fast_dev_run, limit_batches
