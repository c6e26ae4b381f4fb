"""The network and settings of the optim tests that compare runnerx's Runner with MMEngine's:
torch only, so that both mmengine_optim_runs.py (under MMEngine) and the tests (under runnerx)
build the same model on their own BaseModel (:func:`model_class`).

The parameters alternate between settings under ``paramwise_cfg``: in ``named_parameters``
order, ``backbone.0.weight`` decays, ``backbone.0.bias`` (bias) and ``backbone.1.*`` (norm) do
not, ``backbone.3.weight`` does, ... so MMEngine's one-group-per-parameter order and runnerx's
shared groups differ.
"""

import torch.nn.functional as F
from torch import nn

PARAMWISE_OPTIM = {
    "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9, "weight_decay": 0.01},
    "paramwise_cfg": {"bias_decay_mult": 0.0, "norm_decay_mult": 0.0},
}
RESUME_SCHEDULE = [{"type": "MultiStepLR", "milestones": [1], "gamma": 0.5, "by_epoch": True}]

# base_lr: the head keeps optimizer.lr, so MMEngine's base group and runnerx's head group agree
BACKBONE_LR_MULT = {"custom_keys": {"backbone": {"lr_mult": 0.1}}}
# base_lr when every group has a multiplier: read through the first group's
EVERY_GROUP_LR_MULT = {"custom_keys": {"backbone": {"lr_mult": 0.1}, "head": {"lr_mult": 2.0}}}
WARMUP_COSINE = [
    {"type": "LinearLR", "start_factor": 0.1, "by_epoch": False, "begin": 0, "end": 3},
    {
        "type": "CosineAnnealingLR",
        "eta_min": 1e-4,
        "by_epoch": True,
        "begin": 1,
        "end": 3,
        "convert_to_iter_based": True,
    },
]
WARMUP_STEPS = [
    {"type": "LinearLR", "start_factor": 0.1, "by_epoch": False, "begin": 0, "end": 3},
    {"type": "MultiStepLR", "milestones": [1, 2], "gamma": 0.1, "by_epoch": True},
]
LR_CURVES = {
    "backbone-lr-mult-cosine": (BACKBONE_LR_MULT, WARMUP_COSINE),
    "every-group-lr-mult-steps": (EVERY_GROUP_LR_MULT, WARMUP_STEPS),
}


def lr_curve_optim(paramwise_cfg: dict) -> dict:
    """The ``optim_wrapper`` of an lr-curve run."""
    return {
        "optimizer": {"type": "SGD", "lr": 0.1, "momentum": 0.9},
        "paramwise_cfg": paramwise_cfg,
    }


def model_class(base_model: type) -> type:
    """The test model on ``base_model`` (MMEngine's or runnerx's BaseModel): a ``backbone``
    (Linear, BatchNorm1d, ReLU, Linear) and a ``head``, classifying tiny_data's samples."""

    class OracleNet(base_model):
        def __init__(self) -> None:
            super().__init__()
            self.backbone = nn.Sequential(
                nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 8)
            )
            self.head = nn.Linear(8, 2)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            logits = self.head(self.backbone(inputs))
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, data_samples)}
            return logits

    return OracleNet
