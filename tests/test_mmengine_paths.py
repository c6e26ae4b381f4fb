"""MMEngine's import paths with ``runnerx`` in place of ``mmengine``: a mechanical rename of
the imports finds every name listed here, and finds runnerx's own object (not a copy).

``COVERED`` maps each MMEngine module path to the names runnerx offers there and where each
name really lives in runnerx; ``NOT_PORTED`` lists the names of that MMEngine path runnerx
does not offer. mmengine-lite (installed) is the oracle for which names a path has.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).parents[1]

_DATA = {
    name: "runnerx.data"
    for name in (
        "BaseDataset",
        "ClassBalancedDataset",
        "Compose",
        "ConcatDataset",
        "DefaultSampler",
        "InfiniteSampler",
        "RepeatDataset",
        "default_collate",
        "force_full_init",
        "pseudo_collate",
        "worker_init_fn",
    )
}
_FILEIO = [
    "BaseFileHandler",
    "BaseStorageBackend",
    "FileClient",
    "HTTPBackend",
    "HardDiskBackend",
    "JsonHandler",
    "LmdbBackend",
    "LocalBackend",
    "PickleHandler",
    "YamlHandler",
    "copy_if_symlink_fails",
    "copyfile",
    "copyfile_from_local",
    "copyfile_to_local",
    "copytree",
    "copytree_from_local",
    "copytree_to_local",
    "dict_from_file",
    "dump",
    "exists",
    "generate_presigned_url",
    "get",
    "get_file_backend",
    "get_local_path",
    "get_text",
    "isdir",
    "isfile",
    "join_path",
    "list_dir_or_file",
    "list_from_file",
    "load",
    "put",
    "put_text",
    "register_backend",
    "register_handler",
    "remove",
    "rmtree",
]
_LOGGING = ["HistoryBuffer", "MMLogger", "MessageHub", "print_log"]
_REGISTRY = [
    "DATASETS",
    "DATA_SAMPLERS",
    "EVALUATOR",
    "FUNCTIONS",
    "HOOKS",
    "LOG_PROCESSORS",
    "LOOPS",
    "METRICS",
    "MODELS",
    "MODEL_WRAPPERS",
    "OPTIMIZERS",
    "OPTIM_WRAPPERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "PARAM_SCHEDULERS",
    "RUNNERS",
    "STRATEGIES",
    "TRANSFORMS",
    "VISBACKENDS",
    "VISUALIZERS",
    "DefaultScope",
    "Registry",
    "build_from_cfg",
    "init_default_scope",
    *["INFERENCERS", "RUNNER_CONSTRUCTORS", "TASK_UTILS", "WEIGHT_INITIALIZERS"],
    *["build_model_from_cfg", "build_runner_from_cfg", "build_scheduler_from_cfg"],
    *["count_registered_modules", "traverse_registry_tree"],
]


@functools.cache
def mmengine_public_names(path: str) -> frozenset[str]:
    """The oracle: a path's ``__all__``; for the top level and modules without one, the
    public names it defines (the top level: the public names of its ``import *``-ed
    subpackages, and ``version_info``)."""
    module = importlib.import_module(path)
    if hasattr(module, "__all__"):
        return frozenset(module.__all__)
    if path == "mmengine":
        return frozenset(
            name
            for name, value in vars(module).items()
            if not name.startswith("_") and not inspect.ismodule(value)
        )
    return frozenset(
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == path
    )


#: MMEngine's storage-backend modules -> the class each defines
_BACKEND_MODULES_NAMES = {
    "base": "BaseStorageBackend",
    "http_backend": "HTTPBackend",
    "lmdb_backend": "LmdbBackend",
    "local_backend": "LocalBackend",
}
_BACKEND_MODULES = [f"mmengine.fileio.backends.{module}" for module in _BACKEND_MODULES_NAMES]
_BACKEND_REGISTRY = ["backends", "prefix_to_backends", "register_backend"]
_CLUSTER = {"MemcachedBackend", "PetrelBackend"}
_EXTERNAL_CHECKPOINTS = [
    "get_deprecated_model_names",
    "get_external_models",
    "get_mmcls_models",
    "get_torchvision_models",
]

#: MMEngine path -> {name: "runnerx module" or "runnerx module:attribute.path"}
COVERED: dict[str, dict[str, str]] = {
    "mmengine": {
        **dict.fromkeys(("Config", "ConfigDict", "DictAction", "read_base"), "runnerx.config"),
        "version_info": "runnerx.version",
        **dict.fromkeys(_FILEIO, "runnerx.fileio"),
        **dict.fromkeys(_LOGGING, "runnerx.logging"),
        **dict.fromkeys(_REGISTRY, "runnerx.registry"),
        # every name of mmengine.utils (the list comes from the oracle, see _covered)
        **dict.fromkeys(importlib.import_module("mmengine.utils").__all__, "runnerx.utils"),
    },
    # the helpers MMEngine defines in mmengine.utils.misc, some of which runnerx keeps in
    # utils.deprecation and utils.package_utils
    "mmengine.utils.misc": dict.fromkeys(
        importlib.import_module("mmengine.utils").misc.__dict__.keys()
        & set(importlib.import_module("mmengine.utils").__all__),
        "runnerx.utils",
    ),
    # torch's classes where MMEngine picked between PyTorch and parrots
    "mmengine.utils.dl_utils.parrots_wrapper": {
        **dict.fromkeys(
            ("get_build_config", "is_rocm_pytorch"), "runnerx.utils.dl_utils.parrots_wrapper"
        ),
        "TORCH_VERSION": "runnerx.utils.dl_utils.torch_ops",
        "SyncBatchNorm": "torch.nn",
        "_BatchNorm": "torch.nn.modules.batchnorm",
        "_InstanceNorm": "torch.nn.modules.instancenorm",
        "_ConvNd": "torch.nn.modules.conv",
        "_MaxPoolNd": "torch.nn.modules.pooling",
    },
    "mmengine.utils.dl_utils.trace": {"is_jit_tracing": "runnerx.utils.dl_utils.torch_ops"},
    "mmengine.testing": {
        "RunnerTestCase": "runnerx.testing.runner_test_case",
        **dict.fromkeys(
            (
                "assert_allclose",
                "assert_attrs_equal",
                "assert_dict_contains_subset",
                "assert_dict_has_keys",
                "assert_is_norm_layer",
                "assert_keys_equal",
                "assert_params_all_zeros",
                "check_python_script",
            ),
            "runnerx.testing.compare",
        ),
    },
    "mmengine.evaluator": {
        **dict.fromkeys(("BaseMetric",), "runnerx.evaluator.metric"),
        **dict.fromkeys(("Evaluator",), "runnerx.evaluator.evaluator"),
        "DumpResults": "runnerx.evaluator.dump_results",
        "get_metric_value": "runnerx.evaluator.utils",
    },
    "mmengine.evaluator.metric": {
        "BaseMetric": "runnerx.evaluator.metric",
        "DumpResults": "runnerx.evaluator.dump_results",
    },
    "mmengine.evaluator.utils": {"get_metric_value": "runnerx.evaluator.utils"},
    # the collectives and process-group helpers, at the two modules MMEngine splits them into
    **{
        path: dict.fromkeys(mmengine_public_names(path), "runnerx.dist")
        for path in ("mmengine.dist.dist", "mmengine.dist.utils")
    },
    "mmengine.testing._internal": {"MultiProcessTestCase": "runnerx.testing._internal.distributed"},
    "mmengine.logging.logger": {
        "MMLogger": "runnerx.logging.mmlogger",
        "print_log": "runnerx.logging.logger",
    },
    "mmengine.dataset": {**_DATA, "COLLATE_FUNCTIONS": "runnerx.registry:FUNCTIONS"},
    "mmengine.dataset.base_dataset": {
        "BaseDataset": "runnerx.data.base_dataset",
        "Compose": "runnerx.data.transforms",
        "force_full_init": "runnerx.data.base_dataset",
    },
    "mmengine.dataset.sampler": dict.fromkeys(
        ("DefaultSampler", "InfiniteSampler"), "runnerx.data.samplers"
    ),
    "mmengine.dataset.utils": {
        "COLLATE_FUNCTIONS": "runnerx.registry:FUNCTIONS",
        "default_collate": "runnerx.data.collate",
        "pseudo_collate": "runnerx.data.collate",
        "worker_init_fn": "runnerx.data.worker_init",
    },
    "mmengine.dataset.dataset_wrapper": dict.fromkeys(
        ("ClassBalancedDataset", "ConcatDataset", "RepeatDataset"), "runnerx.data.dataset_wrappers"
    ),
    "mmengine.visualization": {
        "Visualizer": "runnerx.logging.visualizer",
        **dict.fromkeys(
            ("BaseVisBackend", "LocalVisBackend", "TensorboardVisBackend"),
            "runnerx.logging.vis_backends",
        ),
        **dict.fromkeys(
            ("MLflowVisBackend", "WandbVisBackend"), "runnerx.logging.vis_backends_external"
        ),
        **dict.fromkeys(
            ("ClearMLVisBackend", "DVCLiveVisBackend"), "runnerx.logging.vis_backends_trackers"
        ),
    },
    "mmengine.visualization.visualizer": {"Visualizer": "runnerx.logging.visualizer"},
    "mmengine.visualization.vis_backend": {
        **dict.fromkeys(
            ("BaseVisBackend", "LocalVisBackend", "TensorboardVisBackend"),
            "runnerx.logging.vis_backends",
        ),
        **dict.fromkeys(
            ("MLflowVisBackend", "WandbVisBackend"), "runnerx.logging.vis_backends_external"
        ),
        **dict.fromkeys(
            ("ClearMLVisBackend", "DVCLiveVisBackend"), "runnerx.logging.vis_backends_trackers"
        ),
    },
    "mmengine.runner": {
        "BaseLoop": "runnerx.runner.base_loop",
        "CheckpointLoader": "runnerx.checkpoint.loader",
        "EpochBasedTrainLoop": "runnerx.runner.loops",
        "FlexibleRunner": "runnerx.runner.mmengine_api",
        "IterBasedTrainLoop": "runnerx.runner.loops",
        "LogProcessor": "runnerx.logging.log_processor",
        "Priority": "runnerx.hooks.hook",
        "Runner": "runnerx.runner.runner",
        "TestLoop": "runnerx.runner.eval_loops",
        "ValLoop": "runnerx.runner.eval_loops",
        "autocast": "runnerx.optim.amp_optim_wrapper",
        "find_latest_checkpoint": "runnerx.checkpoint.runner_state",
        **dict.fromkeys(_EXTERNAL_CHECKPOINTS, "runnerx.checkpoint.model_zoo"),
        "get_priority": "runnerx.hooks.hook",
        "get_state_dict": "runnerx.checkpoint.model_state",
        "load_checkpoint": "runnerx.checkpoint.model_state",
        "load_state_dict": "runnerx.checkpoint.model_state",
        "save_checkpoint": "runnerx.checkpoint.model_state",
        "set_random_seed": "runnerx.runner.environment",
        "turn_on_activation_checkpointing": "runnerx.parallel.activation_checkpointing",
        "weights_to_cpu": "runnerx.checkpoint.model_state",
    },
    "mmengine.runner.checkpoint": {
        "CheckpointLoader": "runnerx.checkpoint.loader",
        "_load_checkpoint": "runnerx.checkpoint.loader:CheckpointLoader.load_checkpoint",
        "_load_checkpoint_with_prefix": (
            "runnerx.checkpoint.model_state:load_checkpoint_with_prefix"
        ),
        "find_latest_checkpoint": "runnerx.checkpoint.runner_state",
        "get_state_dict": "runnerx.checkpoint.model_state",
        "load_checkpoint": "runnerx.checkpoint.model_state",
        "load_from_http": "runnerx.checkpoint.loader",
        "load_from_local": "runnerx.checkpoint.loader",
        **dict.fromkeys(
            (*_EXTERNAL_CHECKPOINTS, "load_from_mmcls", "load_from_openmmlab"),
            "runnerx.checkpoint.model_zoo",
        ),
        "load_from_torchvision": "runnerx.checkpoint.model_zoo",
        "load_state_dict": "runnerx.checkpoint.model_state",
        "save_checkpoint": "runnerx.checkpoint.model_state",
        "weights_to_cpu": "runnerx.checkpoint.model_state",
    },
    "mmengine.config.config": {
        **dict.fromkeys(("Config", "add_args"), "runnerx.config.config"),
        "ConfigDict": "runnerx.config.config_dict",
        "DictAction": "runnerx.config.dict_action",
        "read_base": "runnerx.config.read_base",
    },
    "mmengine.registry.utils": {
        **dict.fromkeys(
            ("count_registered_modules", "traverse_registry_tree"), "runnerx.registry.utils"
        ),
        "init_default_scope": "runnerx.registry.default_scope",
    },
    "mmengine.hooks.hook": dict.fromkeys(("DATA_BATCH", "Hook"), "runnerx.hooks.hook"),
    "mmengine.runner.loops": {
        **dict.fromkeys(("EpochBasedTrainLoop", "IterBasedTrainLoop"), "runnerx.runner.loops"),
        **dict.fromkeys(("TestLoop", "ValLoop"), "runnerx.runner.eval_loops"),
        "_InfiniteDataloaderIterator": "runnerx.runner.infinite_iterator",
    },
    "mmengine.runner.amp": {"autocast": "runnerx.optim.amp_optim_wrapper"},
    "mmengine.runner.activation_checkpointing": {
        "turn_on_activation_checkpointing": "runnerx.parallel.activation_checkpointing",
        "wrap_forward": "runnerx.runner.activation_checkpointing",
    },
    "mmengine.runner.base_loop": {"BaseLoop": "runnerx.runner.base_loop"},
    "mmengine.runner.log_processor": {"LogProcessor": "runnerx.logging.log_processor"},
    "mmengine.runner.utils": {
        "calc_dynamic_intervals": "runnerx.runner.utils",
        "set_random_seed": "runnerx.runner.environment",
    },
    "mmengine.runner.priority": dict.fromkeys(("Priority", "get_priority"), "runnerx.hooks.hook"),
    "mmengine.model.base_model": {
        "BaseModel": "runnerx.model.base_model.base_model",
        **dict.fromkeys(
            ("BaseDataPreprocessor", "ImgDataPreprocessor"),
            "runnerx.model.base_model.data_preprocessor",
        ),
    },
    "mmengine.model.base_model.base_model": {"BaseModel": "runnerx.model.base_model.base_model"},
    "mmengine.model.base_model.data_preprocessor": dict.fromkeys(
        ("BaseDataPreprocessor", "ImgDataPreprocessor"),
        "runnerx.model.base_model.data_preprocessor",
    ),
    # MMEngine's wrappers are runnerx.parallel's
    "mmengine.model.wrappers": {
        "MMDistributedDataParallel": "runnerx.parallel.ddp:DistributedDataParallelModel",
        "MMSeparateDistributedDataParallel": (
            "runnerx.parallel.separate_ddp:SeparateDistributedDataParallelModel"
        ),
        "is_model_wrapper": "runnerx.parallel.unwrap",
    },
    "mmengine.model.wrappers.distributed": {
        "MMDistributedDataParallel": "runnerx.parallel.ddp:DistributedDataParallelModel"
    },
    "mmengine.model.wrappers.seperate_distributed": {
        "MMSeparateDistributedDataParallel": (
            "runnerx.parallel.separate_ddp:SeparateDistributedDataParallelModel"
        )
    },
    "mmengine.model.wrappers.utils": {"is_model_wrapper": "runnerx.parallel.unwrap"},
    "mmengine.model.utils": {
        **dict.fromkeys(
            ("convert_sync_batchnorm", "revert_sync_batchnorm"), "runnerx.parallel.sync_bn"
        ),
        "detect_anomalous_params": "runnerx.parallel.steps:report_parameters_without_gradient",
        "merge_dict": "runnerx.utils.misc",
        "stack_batch": "runnerx.model.base_model.data_preprocessor",
    },
    "mmengine.version": dict.fromkeys(("parse_version_info", "version_info"), "runnerx.version"),
    "mmengine.infer": {"BaseInferencer": "runnerx.infer.infer"},
    "mmengine.infer.infer": dict.fromkeys(
        ("BaseInferencer", "InferencerMeta"), "runnerx.infer.infer"
    ),
    "mmengine.visualization.utils": {
        **dict.fromkeys(
            ("check_length", "color_str2rgb", "tensor2ndarray", "value2list"),
            "runnerx.logging.drawing_utils",
        ),
        "img_from_canvas": "runnerx.logging.drawing_utils:canvas_rgb",
        "convert_overlay_heatmap": "runnerx.logging.featmap:heatmap",
        **dict.fromkeys(
            ("check_type", "check_type_and_length", "color_val_matplotlib", "wait_continue"),
            "runnerx.visualization.utils",
        ),
    },
    "mmengine.hooks.naive_visualization_hook": {
        "NaiveVisualizationHook": "runnerx.hooks.naive_visualization_hook"
    },
    "mmengine.model.efficient_conv_bn_eval": dict.fromkeys(
        (
            "efficient_conv_bn_eval_control",
            "efficient_conv_bn_eval_forward",
            "efficient_conv_bn_eval_graph_transform",
            "turn_on_efficient_conv_bn_eval",
            "turn_on_efficient_conv_bn_eval_for_single_model",
        ),
        "runnerx.model.efficient_conv_bn_eval",
    ),
    "mmengine.hooks.sync_buffer_hook": {"SyncBuffersHook": "runnerx.hooks.sync_buffers_hook"},
    "mmengine.hooks.test_time_aug_hook": dict.fromkeys(
        ("PrepareTTAHook", "build_runner_with_tta"), "runnerx.hooks.prepare_tta_hook"
    ),
    **{
        path: dict.fromkeys(("get_config", "get_model"), "runnerx.hub.hub")
        for path in ("mmengine.hub", "mmengine.hub.hub")
    },
    "mmengine.analysis": {
        **dict.fromkeys(
            ("ActivationAnalyzer", "FlopAnalyzer", "activation_count", "flop_count"),
            "runnerx.analysis.analyzers",
        ),
        "get_model_complexity_info": "runnerx.analysis.complexity",
        **dict.fromkeys(("parameter_count", "parameter_count_table"), "runnerx.analysis.params"),
    },
    "mmengine.analysis.complexity_analysis": {
        **dict.fromkeys(
            ("ActivationAnalyzer", "FlopAnalyzer", "activation_count", "flop_count"),
            "runnerx.analysis.analyzers",
        ),
        **dict.fromkeys(("parameter_count", "parameter_count_table"), "runnerx.analysis.params"),
    },
    "mmengine.analysis.print_helper": {
        "get_model_complexity_info": "runnerx.analysis.complexity",
        "_format_size": "runnerx.analysis.report:format_size",
    },
    "mmengine._strategy": {
        "BaseStrategy": "runnerx._strategy.base",
        "SingleDeviceStrategy": "runnerx._strategy.single_device",
        **dict.fromkeys(
            ("ColossalAIStrategy", "DDPStrategy", "DeepSpeedStrategy", "FSDPStrategy"),
            "runnerx._strategy.distributed",
        ),
    },
    "mmengine._strategy.fsdp": {"FSDPStrategy": "runnerx._strategy.distributed"},
    "mmengine._strategy.deepspeed": {"DeepSpeedStrategy": "runnerx._strategy.distributed"},
    "mmengine._strategy.colossalai": {"ColossalAIStrategy": "runnerx._strategy.distributed"},
    **{
        path: dict.fromkeys(mmengine_public_names("mmengine.device.utils"), "runnerx.device.utils")
        for path in ("mmengine.device", "mmengine.device.utils")
    },
    "mmengine.fileio.io": {
        **dict.fromkeys(("dump", "load"), "runnerx.fileio.load_dump"),
        **dict.fromkeys(
            (
                "copyfile",
                "copytree",
                "exists",
                "get",
                "get_local_path",
                "get_text",
                "isdir",
                "isfile",
                "join_path",
                "list_dir_or_file",
                "put",
                "put_text",
                "remove",
                "rmtree",
                *["copy_if_symlink_fails", "copyfile_from_local", "copyfile_to_local"],
                *["copytree_from_local", "copytree_to_local", "generate_presigned_url"],
            ),
            "runnerx.fileio.paths",
        ),
        "get_file_backend": "runnerx.fileio.backends.registry_utils",
    },
    "mmengine.fileio.file_client": {
        "FileClient": "runnerx.fileio.file_client",
        "HardDiskBackend": "runnerx.fileio.backends.local_backend",
    },
    **{
        f"mmengine.fileio.backends.{module}": {name: f"runnerx.fileio.backends.{module}"}
        for module, name in _BACKEND_MODULES_NAMES.items()
    },
    "mmengine.fileio.backends": {
        **{
            name: f"runnerx.fileio.backends.{module}"
            for module, name in _BACKEND_MODULES_NAMES.items()
        },
        **dict.fromkeys(_BACKEND_REGISTRY, "runnerx.fileio.backends.registry_utils"),
    },
    "mmengine.fileio.backends.registry_utils": dict.fromkeys(
        _BACKEND_REGISTRY, "runnerx.fileio.backends.registry_utils"
    ),
    "mmengine.fileio.handlers": {
        "BaseFileHandler": "runnerx.fileio.handlers.base",
        "JsonHandler": "runnerx.fileio.handlers.json_handler",
        "PickleHandler": "runnerx.fileio.handlers.pickle_handler",
        "YamlHandler": "runnerx.fileio.handlers.yaml_handler",
        **dict.fromkeys(
            ("file_handlers", "register_handler"), "runnerx.fileio.handlers.registry_utils"
        ),
    },
    "mmengine.fileio.handlers.base": {"BaseFileHandler": "runnerx.fileio.handlers.base"},
    "mmengine.fileio.handlers.json_handler": {
        "JsonHandler": "runnerx.fileio.handlers.json_handler",
        "set_default": "runnerx.fileio.handlers.json_handler:json_default",
    },
    "mmengine.fileio.handlers.pickle_handler": {
        "PickleHandler": "runnerx.fileio.handlers.pickle_handler"
    },
    "mmengine.fileio.handlers.yaml_handler": {
        "YamlHandler": "runnerx.fileio.handlers.yaml_handler"
    },
    "mmengine.fileio.handlers.registry_utils": dict.fromkeys(
        ("file_handlers", "register_handler"), "runnerx.fileio.handlers.registry_utils"
    ),
}

#: MMEngine's names at each path that runnerx does not offer (yet)
NOT_PORTED: dict[str, set[str]] = {
    "mmengine": {
        # MMEngine's OpenMMLab-cluster backends, whose client libraries are not on PyPI
        *["MemcachedBackend", "PetrelBackend"],
    },
    "mmengine.utils.misc": set(),
    # MMEngine's formatter and duplicate-warning filter: runnerx's logger has its own
    "mmengine.logging.logger": {"FilterDuplicateWarning", "MMFormatter"},
    "mmengine.dist.dist": set(),
    "mmengine.dist.utils": set(),
    "mmengine.testing._internal": set(),
    "mmengine.testing": set(),
    "mmengine.evaluator": set(),
    "mmengine.evaluator.metric": set(),
    "mmengine.evaluator.utils": set(),
    "mmengine.utils.dl_utils.parrots_wrapper": set(),
    "mmengine.utils.dl_utils.trace": set(),
    "mmengine.dataset": set(),
    "mmengine.dataset.base_dataset": set(),
    "mmengine.dataset.sampler": set(),
    "mmengine.dataset.utils": set(),
    "mmengine.dataset.dataset_wrapper": set(),
    # their packages downgrade ones that runnerx's tests need (see docs/logging.md)
    "mmengine.visualization": {"AimVisBackend", "NeptuneVisBackend"},
    "mmengine.visualization.visualizer": set(),
    "mmengine.visualization.vis_backend": {"AimVisBackend", "NeptuneVisBackend", "force_init_env"},
    "mmengine.runner": set(),
    # OpenMMLab's cluster storage (Ceph through petrel, PAVI): clients not on PyPI
    "mmengine.runner.checkpoint": {"load_from_ceph", "load_from_pavi"},
    "mmengine.config.config": set(),
    "mmengine.registry.utils": set(),
    "mmengine.hooks.hook": set(),
    "mmengine.runner.loops": set(),
    "mmengine.runner.amp": set(),
    "mmengine.runner.activation_checkpointing": set(),
    "mmengine.runner.base_loop": set(),
    "mmengine.runner.log_processor": set(),
    "mmengine.runner.utils": set(),
    "mmengine.runner.priority": set(),
    "mmengine.model.base_model": set(),
    "mmengine.model.base_model.base_model": set(),
    "mmengine.model.base_model.data_preprocessor": set(),
    "mmengine.model.wrappers": {"MMFullyShardedDataParallel"},
    "mmengine.model.wrappers.distributed": set(),
    "mmengine.model.wrappers.seperate_distributed": set(),
    "mmengine.model.wrappers.utils": set(),
    "mmengine.model.utils": set(),
    "mmengine.version": set(),
    "mmengine.infer": set(),
    "mmengine.infer.infer": set(),
    "mmengine.visualization.utils": set(),
    "mmengine.hooks.naive_visualization_hook": set(),
    "mmengine.model.efficient_conv_bn_eval": set(),
    "mmengine.hooks.sync_buffer_hook": set(),
    "mmengine.hooks.test_time_aug_hook": set(),
    "mmengine.hub": set(),
    "mmengine.hub.hub": set(),
    "mmengine.analysis": set(),
    # the text helpers behind get_model_complexity_info: runnerx's report has its own
    "mmengine.analysis.print_helper": {"complexity_stats_str", "complexity_stats_table"},
    "mmengine.analysis.complexity_analysis": set(),
    "mmengine._strategy": set(),
    "mmengine._strategy.fsdp": set(),
    # MMEngine's DeepSpeed and ColossalAI engines: runnerx names only their strategies
    "mmengine._strategy.deepspeed": {
        "DeepSpeedOptimWrapper",
        "MMDeepSpeedEngineWrapper",
        "register_deepspeed_optimizers",
    },
    "mmengine._strategy.colossalai": {
        "ColossalAIModelWrapper",
        "ColossalAIOptimWrapper",
        "register_mixed_precisions",
        "register_optimizers",
        "register_plugins",
    },
    "mmengine.device": set(),
    "mmengine.device.utils": set(),
    "mmengine.fileio.io": set(),
    "mmengine.fileio.file_client": set(),
    **{path: set() for path in _BACKEND_MODULES},
    # MMEngine's cluster backends are importable from these two
    "mmengine.fileio.backends": _CLUSTER,
    "mmengine.fileio.backends.registry_utils": _CLUSTER,
    "mmengine.fileio.handlers": set(),
    "mmengine.fileio.handlers.base": set(),
    "mmengine.fileio.handlers.json_handler": set(),
    "mmengine.fileio.handlers.pickle_handler": set(),
    "mmengine.fileio.handlers.yaml_handler": set(),
    "mmengine.fileio.handlers.registry_utils": set(),
}


def runnerx_path(mmengine_path: str) -> str:
    return "runnerx" + mmengine_path.removeprefix("mmengine")


def resolve(source: str) -> object:
    """The object a ``"module"``-for-the-same-name or ``"module:attr.path"`` source names."""
    module, _, attributes = source.partition(":")
    value = importlib.import_module(module)
    for attribute in attributes.split("."):
        value = getattr(value, attribute)
    return value


def is_same(found: object, canonical: object) -> bool:
    # a classmethod is bound anew on each access: the same function bound to the same class
    if inspect.ismethod(canonical):
        return found == canonical
    return found is canonical


@pytest.mark.parametrize("path", sorted(COVERED))
def test_runnerx_path_has_mmengines_names_as_runnerxs_own_objects(path):
    module = importlib.import_module(runnerx_path(path))
    for name, source in COVERED[path].items():
        canonical = resolve(source if ":" in source else f"{source}:{name}")
        assert hasattr(module, name), f"{runnerx_path(path)} has no {name}"
        assert is_same(getattr(module, name), canonical), (
            f"{runnerx_path(path)}.{name} is not {source}'s object"
        )
    # `from runnerx.x import *` offers the public names and only names that exist
    exported = set(getattr(module, "__all__", ()))
    public = {name for name in COVERED[path] if not name.startswith("_")}
    assert public <= exported, f"missing from __all__: {sorted(public - exported)}"
    assert [name for name in exported if not hasattr(module, name)] == []


@pytest.mark.parametrize("path", sorted(COVERED))
def test_covered_and_not_ported_names_account_for_mmengines_names(path):
    mmengine = importlib.import_module(path)
    covered, not_ported = set(COVERED[path]), NOT_PORTED[path]
    # runnerx claims only names MMEngine really has at that path ...
    assert [name for name in sorted(covered | not_ported) if not hasattr(mmengine, name)] == []
    assert covered.isdisjoint(not_ported)
    # ... and every public name there is either covered (checked above) or listed as not ported
    assert sorted(mmengine_public_names(path) - covered - not_ported) == []


def test_collate_functions_is_the_functions_registry_in_runnerx_data():
    import runnerx.data
    from runnerx.registry import FUNCTIONS

    assert runnerx.data.COLLATE_FUNCTIONS is FUNCTIONS
    assert "COLLATE_FUNCTIONS" in runnerx.data.__all__


def run_python(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.strip()


def test_top_level_fileio_and_utils_names_do_not_import_torch():
    code = (
        "import sys, runnerx; "
        "runnerx.load, runnerx.dump, runnerx.mkdir_or_exist, runnerx.is_list_of, "
        "runnerx.digit_version, runnerx.Config; "
        "print([m for m in ('torch', 'numpy', 'runnerx.logging') if m in sys.modules])"
    )
    assert run_python(code) == "[]"


def test_top_level_logging_names_are_imported_on_first_use():
    code = (
        "import sys, runnerx; before = 'runnerx.logging' in sys.modules; "
        "hub = runnerx.MessageHub; print(before, 'runnerx.logging' in sys.modules)"
    )
    assert run_python(code) == "False True"


def test_the_runner_is_a_top_level_name_loaded_on_first_use():
    code = (
        "import sys, runnerx; before = 'torch' in sys.modules; "
        "from runnerx import Runner; import runnerx.runner; "
        "print(before, Runner is runnerx.runner.Runner, 'Runner' in runnerx.__all__)"
    )
    assert run_python(code) == "False True True"


def test_visualization_does_not_import_the_trackers():
    code = (
        "import sys; from runnerx.visualization import WandbVisBackend, MLflowVisBackend; "
        "from runnerx.visualization.vis_backend import WandbVisBackend; "
        "print([m for m in ('wandb', 'mlflow', 'tensorboard') if m in sys.modules])"
    )
    assert run_python(code) == "[]"


@pytest.mark.parametrize(
    "name",
    ["get_device", "is_cuda_available", "is_mlu_available", "is_mps_available", "is_npu_available"],
)
def test_device_queries_answer_as_mmengine(name):
    import mmengine.device

    import runnerx.device

    assert getattr(runnerx.device, name)() == getattr(mmengine.device, name)()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_get_max_cuda_memory_reports_the_peak_in_mb_and_resets_it():
    from runnerx.device import get_max_cuda_memory

    get_max_cuda_memory()  # start from a reset peak
    block = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")
    del block
    assert get_max_cuda_memory() >= 64
    assert get_max_cuda_memory() < 64  # the 64 MB block is gone and the peak was reset
