"""minidet's registries: children of runnerx's root registries, in the 'minidet' scope."""

from runnerx.registry import DATASETS as MMENGINE_DATASETS
from runnerx.registry import HOOKS as MMENGINE_HOOKS
from runnerx.registry import INFERENCERS as MMENGINE_INFERENCERS
from runnerx.registry import METRICS as MMENGINE_METRICS
from runnerx.registry import MODELS as MMENGINE_MODELS
from runnerx.registry import TRANSFORMS as MMENGINE_TRANSFORMS
from runnerx.registry import VISBACKENDS as MMENGINE_VISBACKENDS
from runnerx.registry import VISUALIZERS as MMENGINE_VISUALIZERS
from runnerx.registry import Registry

MODELS = Registry("model", parent=MMENGINE_MODELS, locations=["minidet.models"])
DATASETS = Registry("dataset", parent=MMENGINE_DATASETS, locations=["minidet.datasets"])
TRANSFORMS = Registry("transform", parent=MMENGINE_TRANSFORMS, locations=["minidet.datasets"])
METRICS = Registry("metric", parent=MMENGINE_METRICS, locations=["minidet.evaluation"])
HOOKS = Registry("hook", parent=MMENGINE_HOOKS)
VISUALIZERS = Registry(
    "visualizer", parent=MMENGINE_VISUALIZERS, locations=["minidet.visualization"]
)
VISBACKENDS = Registry(
    "vis_backend", parent=MMENGINE_VISBACKENDS, locations=["minidet.visualization"]
)
INFERENCERS = Registry("inferencer", parent=MMENGINE_INFERENCERS, locations=["minidet.apis"])
