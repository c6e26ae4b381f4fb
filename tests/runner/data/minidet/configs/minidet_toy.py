_base_ = [
    "_base_/models/minidet.py",
    "_base_/datasets/toy_boxes.py",
    "_base_/schedules/schedule_2e.py",
    "_base_/default_runtime.py",
]
custom_imports = dict(imports=["minidet.models", "minidet.datasets"], allow_failed_imports=False)
efficient_conv_bn_eval = ["backbone"]
custom_hooks = [dict(type="NaiveVisualizationHook")]
