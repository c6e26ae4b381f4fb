"""How a Runner sets itself up when it is built, in MMEngine's order and with MMEngine's
methods: ``setup_env``, ``set_randomness``, ``build_log_processor``, ``build_logger``,
``build_visualizer``, ``build_model`` and ``wrap_model``. Each is a step a Runner subclass
may override, as in MMEngine; the Runner calls its own or the subclass's::

    @RUNNERS.register_module()
    class TaggedRunner(Runner):
        def build_model(self, model):
            model = super().build_model(model)
            model.tag = 'mine'
            return model

``wrap_model`` is where runnerx prepares the model for the process (device, sync-BN,
activation checkpointing, compile, DDP/FSDP: :func:`runnerx.parallel.prepare_model`).
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator
from typing import Any

from torch import nn

from runnerx.suggest import given, refuse_unknown_keywords

from .environment import environment_summary, runtime_summary, set_random_seed, setup_env


class RunnerSetupSteps:
    """Mixed into :class:`~runnerx.runner.Runner` (see the module docstring)."""

    def setup_env(self, env_cfg: dict) -> None:
        """Apply ``env_cfg`` (cuDNN, ``mp_cfg``: start method, OpenCV and, in a distributed
        run, OpenMP/MKL threads) and start torch.distributed for the launcher. Its warnings
        (an ignored ``env_cfg.backend``, a replaced start method) go to the run's log."""
        with self._warnings_to_log():
            setup_env(env_cfg, distributed=self._launcher != "none")
        self._init_distributed(self._launcher, env_cfg.get("dist_cfg") or {})

    def set_randomness(
        self, seed: int | None = None, diff_rank_seed: bool = False, deterministic: bool = False
    ) -> None:
        """Seed Python, numpy and torch and set ``self.seed`` and ``self.deterministic``
        (see ``set_random_seed``); the Runner calls it with its ``randomness`` config. Its
        warning (cuDNN benchmarking turned off) goes to the run's log."""
        self._deterministic = deterministic
        with self._warnings_to_log():
            self.seed = set_random_seed(seed, deterministic, diff_rank_seed)

    @contextlib.contextmanager
    def _warnings_to_log(self) -> Iterator[None]:
        """Warnings raised inside go to the run's log as WARNINGs: at once when it is open,
        else kept for it (``_record_config`` logs them)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        messages = [str(warning.message) for warning in caught]
        logger = getattr(self, "logger", None)
        if logger is None:
            self._env_warnings = [*getattr(self, "_env_warnings", ()), *messages]
            return
        for message in messages:
            logger.warning(message)

    def build_log_processor(self, log_processor: Any) -> Any:
        """The log processor of a ``log_processor`` config (``dict()`` for the default) or the
        object itself."""
        from runnerx.config.config_dict import keyed_copy
        from runnerx.logging.log_processor import LogProcessor
        from runnerx.registry import LOG_PROCESSORS

        if _built_or_config(log_processor, LogProcessor, "log_processor"):
            return log_processor
        cfg = keyed_copy({"type": "LogProcessor", **(log_processor or {})}, "log_processor")
        return LOG_PROCESSORS.build(cfg)

    def build_logger(
        self, log_level: str | int = "INFO", log_file: str | None = None, **kwargs: Any
    ) -> Any:
        """The run's own logger: console and ``log_file`` (``<log_dir>/<timestamp>.log``).
        MMEngine's other keywords (those of ``MMLogger.get_instance``) mean what they mean
        there: ``distributed=True`` gives every rank a log file of its own,
        ``file_handler_cfg`` names the file's handler, ``logger_name`` is the name its lines
        show; ``name`` (the run's logger is no named instance) and ``file_mode`` (the file is
        appended to, as MMEngine's Runner asks) are taken and not used. Others: TypeError."""
        from runnerx.logging.logger import _set_up, get_run_logger
        from runnerx.logging.mmlogger import MMLogger

        name = f"{type(self).__name__}.build_logger"
        refuse_unknown_keywords(name, kwargs, MMLogger.get_instance)
        log_file = log_file or os.path.join(self.log_dir, f"{self.timestamp}.log")
        logger = get_run_logger(None, log_level)
        _set_up(  # its log file, as MMEngine's keywords say
            logger,
            log_file,
            log_level,
            None,
            distributed=bool(kwargs.get("distributed", False)),
            file_handler_cfg=kwargs.get("file_handler_cfg"),
        )
        logger.name = kwargs.get("logger_name") or logger.name
        return logger

    def build_visualizer(self, visualizer: Any = None) -> Any:
        """The visualizer of a ``visualizer`` config (None: local files only), named after the
        run and saving under ``log_dir``, or the object itself."""
        from runnerx.config.config_dict import keyed_copy
        from runnerx.logging.run_logging import DEFAULT_VISUALIZER
        from runnerx.logging.visualizer import Visualizer
        from runnerx.registry import VISUALIZERS

        if _built_or_config(visualizer, Visualizer, "visualizer"):
            return visualizer
        cfg = {"name": self._experiment_name, **(visualizer or DEFAULT_VISUALIZER)}
        return VISUALIZERS.build(
            keyed_copy(cfg, "visualizer"), default_args={"save_dir": self.log_dir}
        )

    def build_model(self, model: nn.Module | dict) -> nn.Module:
        """A module from a config dict (``MODELS``), or the module itself; its weights are not
        initialised here (the Runner does that when it builds its own model)."""
        from runnerx.model import build_model

        return build_model(model, init_weights=False)

    def wrap_model(self, model_wrapper_cfg: dict | None, model: nn.Module) -> nn.Module:
        """``model`` prepared for this process as the config says (``model_wrapper_cfg``, and
        ``strategy``, ``compile``, ``activation_checkpointing``, ``sync_bn``, ... and
        ``env_cfg``): the model to train (see :func:`runnerx.parallel.prepare_model`)."""
        from runnerx.parallel import PREPARE_CFG_KEYS, prepare_model

        options = {
            key: self.cfg[key]
            for key in PREPARE_CFG_KEYS
            if key not in ("env_cfg", "model_wrapper_cfg") and self.cfg.get(key) is not None
        }
        return prepare_model(
            model, env_cfg=self._env_cfg, model_wrapper_cfg=model_wrapper_cfg, **options
        )

    def _init_logging(self, log_level: str | int, log_processor: Any, visualizer: Any) -> None:
        """The log processor, logger, MessageHub and visualizer, in MMEngine's order, made
        current; then the environment and the config are logged."""
        from runnerx.logging import MessageHub
        from runnerx.logging.run_logging import make_current

        self.log_processor = self.build_log_processor(log_processor or {})
        self.logger = self.build_logger(log_level=log_level)
        self.message_hub = MessageHub.new_instance(self._experiment_name)
        self.visualizer = self.build_visualizer(visualizer)
        make_current(self.logger, self.message_hub, self.visualizer)
        runtime = runtime_summary(
            self._env_cfg, self._randomness_cfg, self.seed, self._launcher, self.world_size
        )
        self.logger.info(
            f"System environment:\n{_lines(environment_summary())}\n"
            f"Runtime environment:\n{_lines(runtime)}\n"
        )
        self._record_config()

    def _build_model(self, model: nn.Module | dict, data_preprocessor: Any) -> nn.Module:
        """``build_model``, then the weights initialised (unless they will be loaded) and
        frozen BNs folded into convolutions (``efficient_conv_bn_eval``), then ``wrap_model``."""
        from runnerx.model import build_model
        from runnerx.parallel import unwrap

        if isinstance(model, dict) and data_preprocessor is not None:
            model = _with_preprocessor(model, data_preprocessor)
        # weights are initialised before wrapping: DDP broadcasts them, FSDP shards them
        loaded = self._load_from is not None or bool(self._resume)
        model = build_model(self.build_model(model), init_weights=not loaded)
        conv_bn_modules = self.cfg.get("efficient_conv_bn_eval")
        if conv_bn_modules is not None:  # before compile and wrapping, which keep its forwards
            from runnerx.model.efficient_conv_bn_eval import turn_on_efficient_conv_bn_eval

            turn_on_efficient_conv_bn_eval(model, conv_bn_modules)
        prepared = self.wrap_model(self.cfg.get("model_wrapper_cfg"), model)
        self.unwrapped_model = unwrap(prepared)
        return prepared


def _lines(summary: dict[str, Any]) -> str:
    """``summary`` as indented ``key: value`` lines."""
    return "\n".join(f"    {key}: {value}" for key, value in summary.items())


def _with_preprocessor(model: dict, data_preprocessor: Any) -> dict:
    """A copy of the ``model`` config with the top-level ``data_preprocessor`` unless it has
    its own (MMEngine's precedence); errors building it still name ``cfg.model...``."""
    from runnerx.config.config_dict import keyed_copy

    if "data_preprocessor" in model:
        return model
    model = keyed_copy(model, "model")
    if isinstance(data_preprocessor, dict):  # a copy: the config's own keeps its place
        data_preprocessor = keyed_copy(data_preprocessor, "data_preprocessor")
    model["data_preprocessor"] = data_preprocessor
    return model


def _built_or_config(value: Any, cls: type, key: str) -> bool:
    """Whether ``value`` (the ``key`` argument) is a built ``cls`` (True) or a config dict or
    None (False); anything else, a class above all, is refused with a TypeError."""
    if value is None or isinstance(value, dict):
        return False
    if isinstance(value, cls):
        return True
    name = cls.__name__
    raise TypeError(
        f"{key} must be a {name} (or an instance of a subclass), a config dict such as "
        f"dict(type={name!r}) or None, but got {given(value)}"
    )
