"""Inference: MMEngine's ``mmengine.infer``. :class:`BaseInferencer` is the base of
inferencers that run a trained model on raw inputs (files, arrays) in batches and return its
predictions, drawn and post-processed. See docs/infer.md.

``import runnerx`` does not import this package.
"""

from .infer import BaseInferencer

__all__ = ["BaseInferencer"]
