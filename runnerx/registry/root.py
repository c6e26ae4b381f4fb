"""The root registries: every built-in and user component is registered under one of these.

A package extends a root registry with a child in its own scope::

    from runnerx.registry import MODELS as ROOT_MODELS, Registry

    MODELS = Registry('model', parent=ROOT_MODELS, scope='mypkg', locations=['mypkg.models'])

``locations`` name the runnerx modules that register the built-ins; they are imported the
first time a registry is looked up, so ``import runnerx`` stays cheap (no torch).
"""

from __future__ import annotations

from runnerx.registry.build_functions import (
    build_model_from_cfg,
    build_runner_from_cfg,
    build_scheduler_from_cfg,
)
from runnerx.registry.registry import Registry

#: ``model=dict(type=...)``: models (``BaseModel`` subclasses, ``nn.Module``\\ s); a list of
#: configs builds an ``nn.Sequential``, as in MMEngine.
MODELS = Registry("model", build_model_from_cfg, scope="runnerx", locations=["runnerx.model"])
#: ``train_dataloader.dataset``: datasets.
DATASETS = Registry("dataset", scope="runnerx", locations=["runnerx.data"])
#: ``train_dataloader.sampler``: samplers.
DATA_SAMPLERS = Registry("data sampler", scope="runnerx", locations=["runnerx.data"])
#: ``dataset.pipeline``: data transforms.
TRANSFORMS = Registry("transform", scope="runnerx", locations=["runnerx.data"])
#: ``optim_wrapper.optimizer``: every optimizer of ``torch.optim``, plus custom ones.
OPTIMIZERS = Registry("optimizer", scope="runnerx", locations=["runnerx.optim.optimizers"])
#: ``optim_wrapper=dict(type='OptimWrapper' | 'AmpOptimWrapper', ...)``.
OPTIM_WRAPPERS = Registry("optim_wrapper", scope="runnerx", locations=["runnerx.optim"])
#: ``optim_wrapper.constructor``: what turns a model and a config into an optim wrapper.
OPTIM_WRAPPER_CONSTRUCTORS = Registry(
    "optimizer wrapper constructor", scope="runnerx", locations=["runnerx.optim"]
)
#: ``param_scheduler``: learning-rate and momentum schedulers.
PARAM_SCHEDULERS = Registry(
    "parameter scheduler",
    build_scheduler_from_cfg,
    scope="runnerx",
    locations=["runnerx.optim.scheduler"],
)
#: ``default_hooks`` / ``custom_hooks``: hooks.
HOOKS = Registry("hook", scope="runnerx", locations=["runnerx.hooks"])
#: ``train_cfg`` / ``val_cfg`` / ``test_cfg``: training, validation and test loops.
LOOPS = Registry("loop", scope="runnerx", locations=["runnerx.runner"])
#: ``val_evaluator.metrics``: metrics.
METRICS = Registry("metric", scope="runnerx", locations=["runnerx.evaluator"])
#: ``val_evaluator`` / ``test_evaluator``: evaluators that run metrics.
EVALUATOR = Registry("evaluator", scope="runnerx", locations=["runnerx.evaluator"])
#: ``visualizer.vis_backends``: visualization backends (local files, TensorBoard, ...).
VISBACKENDS = Registry("vis_backend", scope="runnerx", locations=["runnerx.logging"])
#: ``visualizer``: visualizers.
VISUALIZERS = Registry("visualizer", scope="runnerx", locations=["runnerx.logging"])
#: ``log_processor``: what turns logged values into log lines.
LOG_PROCESSORS = Registry("log_processor", scope="runnerx", locations=["runnerx.logging"])
#: ``model_wrapper_cfg``: model wrappers (DDP, FSDP, ...).
MODEL_WRAPPERS = Registry("model_wrapper", scope="runnerx", locations=["runnerx.parallel"])
#: ``strategy``: how a model is placed, wrapped and compiled.
STRATEGIES = Registry("strategy", scope="runnerx", locations=["runnerx.parallel"])
#: functions named in configs, e.g. ``collate_fn=dict(type='default_collate')``.
FUNCTIONS = Registry("function", scope="runnerx", locations=["runnerx.data"])
#: ``runner_type``: runners (``RUNNERS.build(cfg)`` builds the one a whole config names).
RUNNERS = Registry("runner", build_runner_from_cfg, scope="runnerx", locations=["runnerx.runner"])
#: ``init_cfg=dict(type=...)``: weight initializers (``'Kaiming'``, ``'Pretrained'``, ...).
WEIGHT_INITIALIZERS = Registry(
    "weight initializer", scope="runnerx", locations=["runnerx.model.initializers"]
)
#: task-specific parts of downstream packages (box coders, assigners, ...); runnerx has none.
TASK_UTILS = Registry("task util", scope="runnerx")
#: inferencers of downstream packages; runnerx has none.
INFERENCERS = Registry("inferencer", scope="runnerx")
#: runner constructors of downstream packages; runnerx has none.
RUNNER_CONSTRUCTORS = Registry("runner constructor", scope="runnerx")
