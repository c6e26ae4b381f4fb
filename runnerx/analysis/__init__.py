"""Model complexity: flops, activations and parameters per module, MMEngine's
``mmengine.analysis`` names (``get_model_complexity_info``, ``FlopAnalyzer``, ...).

The model runs once, eagerly, under a ``TorchDispatchMode``, with module hooks attributing
each aten op to the modules running it (no ``torch.jit`` tracing). Importing runnerx does not
import this package.
"""

from .analyzers import (
    ActivationAnalyzer,
    FlopAnalyzer,
    ModelAnalysis,
    activation_count,
    flop_count,
)
from .complexity import get_model_complexity_info
from .params import parameter_count, parameter_count_table

__all__ = [
    "ActivationAnalyzer",
    "FlopAnalyzer",
    "ModelAnalysis",
    "activation_count",
    "flop_count",
    "get_model_complexity_info",
    "parameter_count",
    "parameter_count_table",
]
