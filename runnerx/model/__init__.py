"""Models: BaseModel (train_step / val_step / test_step), data preprocessors, weight
initialisation, averaged models (EMA), test-time augmentation (BaseTTAModel), frozen BNs folded
into convolutions (efficient_conv_bn_eval), parameter-count summaries (model_summary) and example
models.

Importing this package registers its models and preprocessors in MODELS (it is the MODELS
registry's ``locations`` entry). See docs/model.md.
"""

from runnerx.model.averaged_model import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from runnerx.model.base_model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor
from runnerx.model.base_model.data_preprocessor import stack_batch
from runnerx.model.base_module import BaseModule, ModuleDict, ModuleList, Sequential
from runnerx.model.build import build_model
from runnerx.model.examples import CharTransformerLM, DigitsConvNet, TransformerBlock
from runnerx.model.initializers import (
    BaseInit,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)
from runnerx.model.summary import model_summary
from runnerx.model.test_time_aug import BaseTTAModel
from runnerx.model.weight_init import initialize, load_pretrained, update_init_info
from runnerx.utils import lazy_attributes

#: mmengine.model's names that live elsewhere in runnerx, imported when first asked for
#: (runnerx.parallel builds on this package's models)
__getattr__ = lazy_attributes(
    __name__,
    {
        "MMDistributedDataParallel": "runnerx.parallel.ddp:DistributedDataParallelModel",
        "MMSeparateDistributedDataParallel": (
            "runnerx.parallel.separate_ddp:SeparateDistributedDataParallelModel"
        ),
        "convert_sync_batchnorm": "runnerx.parallel.sync_bn",
        "detect_anomalous_params": "runnerx.parallel.steps:report_parameters_without_gradient",
        "is_model_wrapper": "runnerx.parallel.unwrap",
        "merge_dict": "runnerx.utils.misc",
        "revert_sync_batchnorm": "runnerx.parallel.sync_bn",
        # imported when asked for: a run without efficient_conv_bn_eval does not load it
        "turn_on_efficient_conv_bn_eval": "runnerx.model.efficient_conv_bn_eval",
        "turn_on_efficient_conv_bn_eval_for_single_model": "runnerx.model.efficient_conv_bn_eval",
    },
)


__all__ = [
    "BaseAveragedModel",
    "BaseDataPreprocessor",
    "BaseInit",
    "BaseModel",
    "BaseModule",
    "BaseTTAModel",
    "Caffe2XavierInit",
    "CharTransformerLM",
    "ConstantInit",
    "DigitsConvNet",
    "ExponentialMovingAverage",
    "ImgDataPreprocessor",
    "KaimingInit",
    "MMDistributedDataParallel",
    "MMSeparateDistributedDataParallel",
    "ModuleDict",
    "ModuleList",
    "MomentumAnnealingEMA",
    "NormalInit",
    "PretrainedInit",
    "Sequential",
    "StochasticWeightAverage",
    "TransformerBlock",
    "TruncNormalInit",
    "UniformInit",
    "XavierInit",
    "bias_init_with_prob",
    "build_model",
    "caffe2_xavier_init",
    "constant_init",
    "convert_sync_batchnorm",
    "detect_anomalous_params",
    "initialize",
    "is_model_wrapper",
    "kaiming_init",
    "load_pretrained",
    "merge_dict",
    "model_summary",
    "normal_init",
    "revert_sync_batchnorm",
    "stack_batch",
    "trunc_normal_init",
    "turn_on_efficient_conv_bn_eval",
    "turn_on_efficient_conv_bn_eval_for_single_model",
    "uniform_init",
    "update_init_info",
    "xavier_init",
]
