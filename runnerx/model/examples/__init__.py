"""Example models, registered in MODELS: DigitsConvNet (image classification) and
CharTransformerLM (character language modelling)."""

from runnerx.model.examples.char_transformer import (
    CausalSelfAttention,
    CharTransformerLM,
    TransformerBlock,
)
from runnerx.model.examples.digits_convnet import DigitsConvNet

__all__ = ["CausalSelfAttention", "CharTransformerLM", "DigitsConvNet", "TransformerBlock"]
