"""Models: BaseModel (train_step / val_step / test_step), data preprocessors, weight
initialisation, averaged models (EMA), test-time augmentation (BaseTTAModel) and example
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
from runnerx.model.base_model import BaseModel
from runnerx.model.base_module import BaseModule, ModuleDict, ModuleList, Sequential
from runnerx.model.build import build_model
from runnerx.model.data_preprocessor import BaseDataPreprocessor
from runnerx.model.examples import CharTransformerLM, DigitsConvNet, TransformerBlock
from runnerx.model.img_data_preprocessor import ImgDataPreprocessor, stack_batch
from runnerx.model.test_time_aug import BaseTTAModel
from runnerx.model.weight_init import initialize, load_pretrained

__all__ = [
    "BaseAveragedModel",
    "BaseDataPreprocessor",
    "BaseModel",
    "BaseModule",
    "BaseTTAModel",
    "CharTransformerLM",
    "DigitsConvNet",
    "ExponentialMovingAverage",
    "ImgDataPreprocessor",
    "ModuleDict",
    "ModuleList",
    "MomentumAnnealingEMA",
    "Sequential",
    "StochasticWeightAverage",
    "TransformerBlock",
    "build_model",
    "initialize",
    "load_pretrained",
    "stack_batch",
]
