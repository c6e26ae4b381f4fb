"""MMEngine's ``mmengine.analysis.complexity_analysis`` path: the FLOP and activation
analyzers and the parameter counts, which runnerx keeps in :mod:`runnerx.analysis.analyzers`
and :mod:`runnerx.analysis.params`."""

from .analyzers import ActivationAnalyzer, FlopAnalyzer, activation_count, flop_count
from .params import parameter_count, parameter_count_table

__all__ = [
    "ActivationAnalyzer",
    "FlopAnalyzer",
    "activation_count",
    "flop_count",
    "parameter_count",
    "parameter_count_table",
]
