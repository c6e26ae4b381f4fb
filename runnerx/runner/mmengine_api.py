"""What MMEngine's Runner offers beyond running, kept for code written against it: read-only
views (``val_evaluator``, ``val_interval``, ``model_name``, ...) and the ``build_*`` methods
that scripts and custom loops call. Each works through the Runner's own parts and builders::

    runner = Runner.from_cfg(cfg)
    runner.val_interval, runner.val_evaluator.metrics, runner.model_name
    optim_wrapper = runner.build_optim_wrapper(dict(optimizer=dict(type='SGD', lr=0.1)))

and MMEngine's second runner, ``runner_type='FlexibleRunner'`` (:class:`FlexibleRunner`),
which builds the same Runner.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import torch
from torch import nn

from runnerx.config import Config
from runnerx.registry import RUNNERS

from .lightning_flags import (
    TRAINER_ARGUMENTS,
    TRAINER_FLAGS,
    refuse_trainer_flags,
    trainer_flag_warnings,
)
from .loops import TestLoop, ValLoop, build_eval_loop, build_train_loop
from .mmengine_steps import LeftOut, MMEngineSteps  # noqa: F401 (LeftOut: its old path)

#: top-level keys of MMCV 1.x configs, which MMEngine ignores as silently as any unknown key
#: (a run then trains without the schedule or hook they meant), and where each went (the
#: Lightning Trainer's flags: lightning_flags.py)
_MMCV_KEYS = {
    "optimizer": "optim_wrapper=dict(optimizer=...)",
    "optimizer_config": "optim_wrapper (clip_grad=..., accumulative_counts=..., or "
    "type='AmpOptimWrapper')",
    "lr_config": "param_scheduler=[...]",
    "momentum_config": "param_scheduler=[...] (the *Momentum schedulers)",
    "runner": "train_cfg=dict(by_epoch=True, max_epochs=...) or dict(by_epoch=False, "
    "max_iters=...)",
    "total_epochs": "train_cfg.max_epochs",
    "checkpoint_config": "default_hooks.checkpoint",
    "log_config": "default_hooks.logger (and visualizer.vis_backends for its hooks)",
    "evaluation": "val_cfg, val_evaluator and train_cfg.val_interval",
    "workflow": "train_cfg / val_cfg",
    "data": "train_dataloader, val_dataloader and test_dataloader",
    "dist_params": "env_cfg.dist_cfg",
    "resume_from": "resume=True with load_from=<checkpoint>",
    "fp16": "optim_wrapper=dict(type='AmpOptimWrapper', ...)",
}
#: top-level keys read outside the Runner's arguments: by the model building and
#: preparation, the tools, the config loader and runner_type
_OTHER_RUNNER_KEYS = (
    "runner_type",
    "custom_imports",
    "tta_model",
    "tta_pipeline",
    "efficient_conv_bn_eval",
)


class MMEngineRunnerAPI(MMEngineSteps):
    """Mixed into :class:`~runnerx.runner.Runner` (see the module docstring)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        """Refuse Lightning Trainer flags given as arguments (``Runner(max_epochs=5)``) with
        the runnerx key of each, where Python's error would name none."""
        if not TRAINER_ARGUMENTS.isdisjoint(kwargs):
            refuse_trainer_flags(cls, kwargs)
        return super().__new__(cls)

    @property
    def model_name(self) -> str:
        """The model's class name (the module inside any DDP/FSDP wrapper)."""
        return type(self.unwrapped_model).__name__

    @property
    def deterministic(self) -> bool:
        """Whether deterministic algorithms were asked for (``randomness.deterministic``, or
        the last ``set_randomness`` call)."""
        return bool(self._deterministic)

    @property
    def val_evaluator(self) -> Any:
        """The validation loop's evaluator (None without validation)."""
        return None if self.val_loop is None else self.val_loop.evaluator

    @property
    def test_evaluator(self) -> Any:
        """The test loop's evaluator (None without a test)."""
        return None if self.test_loop is None else self.test_loop.evaluator

    @property
    def val_interval(self) -> int:
        """Validate every this many epochs (or iterations) of training."""
        return self._training_loop().val_interval

    @property
    def val_begin(self) -> int:
        """The epoch (or iteration) from which training validates."""
        return self._training_loop().val_begin

    def _training_loop(self) -> Any:
        """``train_loop``, which what needs training asks for: a Runner without
        ``train_cfg`` says it cannot train (MMEngine's fails on None)."""
        loop = self.train_loop
        if loop is None:
            raise RuntimeError(
                "this Runner has no train_cfg / train_dataloader / optim_wrapper: it cannot "
                "train (give all three to train; val() and test() need none of them)"
            )
        return loop

    def build_optim_wrapper(self, optim_wrapper: Any) -> Any:
        """An optim wrapper for ``self.model`` from an ``optim_wrapper`` config (one built is
        returned as it is)."""
        from runnerx.optim import OptimWrapper, build_optim_wrapper

        if isinstance(optim_wrapper, OptimWrapper):  # as it is, checked for the model's parameters
            return build_optim_wrapper(self.model, optim_wrapper)
        if isinstance(optim_wrapper, torch.optim.Optimizer):  # the likeliest mistake
            raise TypeError(
                f"optim_wrapper is an optimizer ({type(optim_wrapper).__name__}): pass "
                "OptimWrapper(optimizer=it) or dict(optimizer=it)"
            )
        if not isinstance(optim_wrapper, dict):
            raise TypeError(
                "optim_wrapper must be an OptimWrapper or a config dict such as "
                "dict(optimizer=dict(type='SGD', lr=0.01)), got "
                f"{type(optim_wrapper).__name__}: {optim_wrapper!r}"
            )
        return build_optim_wrapper(self.model, optim_wrapper)

    def build_param_scheduler(self, scheduler: Any) -> list | dict:
        """The schedulers of a ``param_scheduler`` config for ``self.optim_wrapper``, which
        must be built already (``build_optim_wrapper``)."""
        from runnerx.data.build import length_of
        from runnerx.optim.scheduler import build_param_schedulers
        from runnerx.utils.errors import RuntimeAssertionError

        if isinstance(self.optim_wrapper, dict) or self.optim_wrapper is None:
            raise RuntimeAssertionError(
                "build_optim_wrapper should be called before build_param_scheduler, whose "
                "schedulers need the built optim wrapper: set runner.optim_wrapper = "
                "runner.build_optim_wrapper(cfg) first"
            )
        loop = self._training_loop()
        return build_param_schedulers(
            scheduler,
            self.optim_wrapper,
            # none for an iterable dataset, which only an iteration-based loop reads
            epoch_length=length_of(loop.dataloader),
            max_epochs=loop.max_epochs,
            max_iters=loop.max_iters,
        )

    def _build_optimization(self) -> None:
        """Build the optim wrapper, with ``auto_scale_lr.enable`` its lr scaled (a config's
        before building, an optimizer given built after, each optimizer once: see
        :mod:`runnerx.optim.lr_scaling`), and the schedulers from their configs; built ones
        are kept. ``train()`` needs them, and so does ``resume()`` called before it, as in
        MMEngine."""
        from runnerx.data.build import batch_size_of
        from runnerx.optim.lr_scaling import build_with_scaled_lr

        loop = self._training_loop()  # a Runner without train_cfg says so here
        optim_cfg = self.optim_wrapper
        if isinstance(optim_cfg, dict):  # the first build
            self._log_batch_per_process(batch_size_of(loop.dataloader))
        scale = self.auto_scale_lr
        if scale is None:
            self.optim_wrapper = self.build_optim_wrapper(optim_cfg)
        else:
            self.optim_wrapper = build_with_scaled_lr(
                self.build_optim_wrapper,
                optim_cfg,
                scale,
                self._real_batch_size(scale),
                self.param_schedulers,
                self.logger,
            )
        if self.param_schedulers is not None:
            self.param_schedulers = self.build_param_scheduler(self.param_schedulers)

    def _log_batch_per_process(self, batch_size: Any) -> None:
        """Say, in a distributed run, that ``train_dataloader.batch_size`` is per process
        (as in MMEngine), and how many samples an iteration trains on."""
        if self.world_size == 1 or not isinstance(batch_size, int):
            return
        scale = self.auto_scale_lr
        hint = ""
        if isinstance(scale, dict) and scale.get("base_batch_size") and not scale.get("enable"):
            hint = (
                f" (auto_scale_lr.base_batch_size={scale['base_batch_size']}: --auto-scale-lr "
                "scales the lr to the samples per iteration)"
            )
        self.logger.info(
            f"train_dataloader.batch_size={batch_size} is per process: {self.world_size} "
            f"processes train on {batch_size * self.world_size} samples per iteration{hint}"
        )

    def build_train_loop(self, loop: Any) -> Any:
        """A training loop from a ``train_cfg``-style dict, over the training dataloader (a
        loop object is returned as it is)."""
        if not _is_loop_cfg(loop, "train_cfg"):
            return loop
        return build_train_loop(self, self._train_loop_cfg[0], loop)

    def build_val_loop(self, loop: Any) -> Any:
        """A validation loop from a ``val_cfg``-style dict, over the validation dataloader
        and evaluator (a loop object is returned as it is)."""
        return self._build_eval_loop(loop, self._val_loop_cfg, ValLoop)

    def build_test_loop(self, loop: Any) -> Any:
        """A test loop from a ``test_cfg``-style dict, over the test dataloader and
        evaluator (a loop object is returned as it is)."""
        return self._build_eval_loop(loop, self._test_loop_cfg, TestLoop)

    def _build_eval_loop(self, loop: Any, parts: tuple, default: type) -> Any:
        if not _is_loop_cfg(loop, f"{default.mode}_cfg"):
            return loop
        dataloader, _, evaluator = parts
        return build_eval_loop(self, dataloader, loop, evaluator, default)

    def get_hooks_info(self) -> str:
        """The hooks at each point, in the order they run (what the Runner logs at start)."""
        from runnerx.hooks import format_hook_table

        return format_hook_table(self.hooks)

    def register_custom_hooks(self, hooks: list) -> None:
        """Add hooks (objects or config dicts), each at its priority."""
        for hook in hooks:
            self.register_hook(hook)

    def _record_config(self) -> None:
        """Log the config and hand it to the visualizer, as MMEngine does when its Runner is
        built, and name the MMCV 1.x keys MMEngine ignores. ``cfg_text`` keeps the text for
        the dumped file and checkpoints. ``setup_env``'s warnings are logged first."""
        for warning in getattr(self, "_env_warnings", ()):  # a subclass's setup_env sets none
            self.logger.warning(warning)
        self.cfg_text = self._config_text()
        if self.cfg_text:
            self.logger.info(f"Config:\n{self.cfg_text}")
            self.visualizer.add_config(self.cfg)
        for key, place in _MMCV_KEYS.items():
            if self.cfg.get(key) is not None:
                self.logger.warning(
                    f"the config's {key!r} is an MMCV 1.x key, which MMEngine and runnerx "
                    f"ignore; in MMEngine configs it is {place}"
                )
        self._name_misspelt_keys()

    def _name_misspelt_keys(self) -> None:
        """Warn about top-level keys that look like a misspelt Runner key (``default_hook``,
        ``scheduler``) or are Lightning Trainer flags (``gradient_clip_val``): they are left
        alone, as in MMEngine, like a config's own variables, so the run would go on without
        what they meant."""
        from runnerx.parallel import PREPARE_CFG_KEYS

        known = {*inspect.signature(type(self).__init__).parameters, *PREPARE_CFG_KEYS}
        known |= set(_OTHER_RUNNER_KEYS)
        for warning in trainer_flag_warnings(self.cfg, known):
            self.logger.warning(warning)
        # not suggested: 'tta_pipeline' looks like the pipelines every config defines
        suggested = sorted(known - {"tta_pipeline", "cfg"})
        for key in self.cfg:
            if key in known or key in _MMCV_KEYS or key in TRAINER_FLAGS or key.startswith("_"):
                continue
            close = difflib.get_close_matches(key, suggested, n=1, cutoff=0.75)
            if close:
                self.logger.warning(
                    f"the config's {key!r} is not a key the Runner reads: did you mean "
                    f"{close[0]!r}? (MMEngine ignores it too)"
                )

    def _config_text(self) -> str | None:
        """The config as Python; None when it is empty or holds values that cannot be written
        as Python (a ``functools.partial`` given to a Runner built from arguments, say), which
        is said in the log."""
        if not self.cfg:
            return None
        try:
            return self.cfg.pretty_text
        except TypeError as err:
            self.logger.info(f"The config is not logged or saved as a file: {err}")
            return None

    def dump_config(self) -> None:
        """Write the config into ``work_dir`` (rank 0), as MMEngine does: under the config
        file's name, or ``<timestamp>.py`` for a config built in Python. Each run also keeps its
        own copy, ``<log_dir>/vis_data/config.py`` (LocalVisBackend). The Runner does this when
        it is built; an empty config (a Runner built from arguments) is not written, nor is the
        work dir's file rewritten while another run trains there (``tools/test.py`` of one of
        its checkpoints), nor by a ``fast_dev_run`` (a smoke test must not leave its
        ``fast_dev_run`` in the config that ``tools/test.py`` of the real run reads): the file
        stays, and this run's config is in its log and its own copy."""
        if not self.cfg_text or self.rank != 0:
            return
        from .work_dir_lock import other_run_in

        path = os.path.join(
            self.work_dir, os.path.basename(self.cfg.filename or f"{self.timestamp}.py")
        )
        if self.fast_dev_run:
            self.logger.info(
                f"fast_dev_run: {path} is not written (a smoke test leaves the work dir's "
                f"config alone); this run's config is in its log under {self.log_dir}"
            )
            return
        holder = other_run_in(self.work_dir)
        if holder is not None and os.path.exists(path):
            self.logger.info(f"{path} stays the config of the run training there ({holder})")
            return
        self.cfg.dump(path)


@RUNNERS.register_module()
class FlexibleRunner:
    """MMEngine's ``FlexibleRunner`` for configs that name it (``runner_type='FlexibleRunner'``):
    it builds runnerx's :class:`~runnerx.runner.Runner`, which runs FlexibleRunner's strategies
    and ``compile`` itself::

        runner_type = 'FlexibleRunner'
        strategy = dict(type='FSDPStrategy', model_wrapper=dict(sharding_strategy='FULL_SHARD'))
        compile = True

    It takes FlexibleRunner's arguments with its defaults (``work_dir='work_dirs'``; the
    launcher, when None, read from the environment) and the Runner's for the rest
    (``env_cfg``, ``default_scope``, ``randomness``: as runnerx's Runner takes MMEngine's
    Runner's). ``strategy`` is a ``STRATEGIES`` dict (MMEngine's names, see
    :mod:`runnerx.parallel.mmengine_strategies`, or runnerx's) or a :mod:`runnerx._strategy`
    object (``FSDPStrategy(...)``), whose wrapping, launcher and randomness the Runner takes.
    ``compile`` takes MMEngine's ``target`` too (see :mod:`runnerx.parallel.compile`). Unlike
    MMEngine's ``FlexibleRunner.from_cfg``, which drops the config's ``compile``, ``from_cfg``
    honours it.
    """

    def __new__(
        cls,
        model: nn.Module | dict,
        *,
        work_dir: str = "work_dirs",
        launcher: str | None = None,
        strategy: Any = None,
        compile: bool | Mapping = False,
        cfg: Config | dict | None = None,
        **runner_args: Any,
    ) -> Any:
        from runnerx._strategy import SingleDeviceStrategy
        from runnerx.dist import infer_launcher

        from .runner import Runner

        if isinstance(strategy, SingleDeviceStrategy):  # DDPStrategy, FSDPStrategy too
            # the object has set up the process: the Runner takes its launcher and randomness
            launcher = strategy.launcher if launcher is None else launcher
            runner_args.setdefault("randomness", strategy.randomness)
            strategy = strategy.wrapper_cfg()
        elif strategy is not None and not isinstance(strategy, Mapping):
            raise TypeError(
                "strategy must be a dict such as dict(type='DDPStrategy') or a "
                "runnerx._strategy object such as FSDPStrategy(...); runnerx does not take "
                f"strategy objects of other kinds, got {type(strategy).__name__}"
            )
        cfg = _config_with(cfg, strategy=strategy, compile=compile or None)
        launcher = infer_launcher() if launcher is None else launcher
        return Runner(model, work_dir, launcher=launcher, cfg=cfg, **runner_args)

    @classmethod
    def from_cfg(cls, cfg: Config | dict) -> Any:
        """The Runner of a whole config: each argument read from the config key of its name."""
        from .runner import Runner

        cfg = config_copy(cfg)  # the arguments too are read from the copy
        if "model" not in cfg:
            raise KeyError("the config has no model: FlexibleRunner needs it")
        names = [*inspect.signature(Runner.__init__).parameters, "strategy", "compile"]
        kwargs = {name: cfg[name] for name in names if name not in ("self", "cfg") and name in cfg}
        return cls(cfg=cfg, **kwargs)


def _is_loop_cfg(loop: Any, key: str) -> bool:
    """Whether ``loop`` is a loop config (True) or a loop object (False); anything else is
    refused, as MMEngine refuses it."""
    if isinstance(loop, dict):
        return True
    if callable(getattr(loop, "run", None)):
        return False
    raise TypeError(
        f"{key} must be a loop config dict or a loop object (with a run() method), got "
        f"{type(loop).__name__}: {loop!r}"
    )


def config_copy(cfg: Config | dict | None, shared: Iterable[Any] = ()) -> Config:
    """A copy of ``cfg`` as a Config (its provenance kept) whose dicts, lists and tuples are
    its own, as MMEngine's Runner takes one: changing the caller's config afterwards changes
    nothing in the run. Objects in it (a module, a dataset, a function) and in ``shared``
    (the Runner's arguments, which ``from_cfg`` read from a copy already) are kept as they
    are, as a Runner keeps the objects it is given, not copied."""
    memo = {id(value): value for value in (*shared, *_objects_in(cfg)) if value is not cfg}
    if isinstance(cfg, Config):
        return copy.deepcopy(cfg, memo)
    return Config(copy.deepcopy(dict(cfg or {}), memo))


def _objects_in(value: Any) -> Iterator[Any]:
    """What the dicts, lists, tuples and sets of the tree ``value`` hold that is none of
    them (nor a str or number, which a copy shares anyway)."""
    if isinstance(value, (Mapping, Config)):
        for item in value.values():
            yield from _objects_in(item)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from _objects_in(item)
    elif value is not None and not isinstance(value, (str, bytes, int, float)):
        yield value


def _config_with(cfg: Config | dict | None, **values: Any) -> Config:
    """``cfg`` as a Config holding ``values`` (a copy when that changes it; the Runner
    copies the config it is given in any case)."""
    cfg = cfg if isinstance(cfg, Config) else config_copy(cfg)
    changed = {key: value for key, value in values.items() if cfg.get(key) != value}
    if changed:
        cfg = copy.copy(cfg)  # its own top level: the caller's keeps its values
        for key, value in changed.items():
            cfg[key] = value
    return cfg
