"""Stacks the uint8 images into a float batch and normalises it."""

import torch

from minidet.registry import MODELS
from runnerx.model import BaseDataPreprocessor


@MODELS.register_module()
class MiniDetDataPreprocessor(BaseDataPreprocessor):
    """``(img - mean) / std`` per channel, on the model's device."""

    def __init__(self, mean=(127.5, 127.5, 127.5), std=(127.5, 127.5, 127.5)):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean).view(-1, 1, 1), False)
        self.register_buffer("std", torch.tensor(std).view(-1, 1, 1), False)

    def forward(self, data, training=False):
        data = self.cast_data(data)
        inputs = data["inputs"]
        if isinstance(inputs, (list, tuple)):
            inputs = torch.stack(list(inputs))
        inputs = (inputs.float() - self.mean) / self.std
        return dict(inputs=inputs, data_samples=data.get("data_samples"))
