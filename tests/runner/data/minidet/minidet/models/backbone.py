"""A conv -> bn -> relu backbone whose BN can stay frozen (``norm_eval``)."""

from torch import nn

from minidet.registry import MODELS
from runnerx.model import BaseModule


@MODELS.register_module()
class ConvBNReLUBackbone(BaseModule):
    """``len(channels)`` stride-2 conv -> bn -> relu stages; ``norm_eval`` keeps BN in eval."""

    def __init__(self, in_channels=3, channels=(16, 32), norm_eval=False, init_cfg=None):
        super().__init__(init_cfg=init_cfg)
        self.norm_eval = norm_eval
        layers = []
        for out_channels in channels:
            layers += [
                nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU(inplace=True),
            ]
            in_channels = out_channels
        self.layers = nn.Sequential(*layers)
        self.out_channels = in_channels

    def forward(self, x):
        return self.layers(x)

    def train(self, mode=True):
        super().train(mode)
        if mode and self.norm_eval:
            for module in self.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.eval()
        return self
