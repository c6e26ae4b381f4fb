"""Evaluation: the Evaluator, the BaseMetric contract and the built-in metrics.

Importing this package registers ``Evaluator`` in EVALUATOR and ``Accuracy``,
``DumpResults`` and ``Perplexity`` in METRICS (it is those registries' ``locations`` entry).
"""

from .accuracy import Accuracy
from .dump_results import DumpResults, add_dump_results
from .evaluator import Evaluator, build_evaluator
from .metric import BaseMetric
from .perplexity import Perplexity
from .utils import get_metric_value

__all__ = [
    "Accuracy",
    "BaseMetric",
    "DumpResults",
    "Evaluator",
    "Perplexity",
    "add_dump_results",
    "build_evaluator",
    "get_metric_value",
]
