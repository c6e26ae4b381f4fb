"""Evaluation: the Evaluator, the BaseMetric contract and the built-in metrics.

Importing this package registers ``Evaluator`` in EVALUATOR and ``Accuracy`` and
``Perplexity`` in METRICS (it is those registries' ``locations`` entry).
"""

from .accuracy import Accuracy
from .evaluator import Evaluator, build_evaluator
from .metric import BaseMetric
from .perplexity import Perplexity

__all__ = ["Accuracy", "BaseMetric", "Evaluator", "Perplexity", "build_evaluator"]
